// Recent metrics of a host as small uPlot charts (last hour, refreshed every 5 s).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, qs } from './api.js';
import { ErrorText } from './components.js';

const MAX_CHARTS = 8;
const REFRESH_MS = 5_000;

interface Series {
  name: string;
  samples: { ts: string; value: number }[];
}

/** 68698112 → "68.7M", 10.375 → "10.38": short enough for the y axis. */
export function compact(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(6)); // ticks are already round: keep their digits
}

/** An x tick (Unix seconds) as local HH:MM:SS. */
function clock(v: number | null): string {
  if (v === null) return '';
  return new Date(v * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

function Chart(props: { series: Series }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>();
  const data: uPlot.AlignedData = [props.series.samples.map((s) => Date.parse(s.ts) / 1000), props.series.samples.map((s) => s.value)];
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    if (plot.current === undefined) {
      plot.current = new uPlot(
        {
          width: Math.max(240, el.clientWidth || 320),
          height: 140,
          legend: { show: false },
          cursor: { drag: { x: false, y: false } },
          scales: { x: { time: true } },
          axes: [{ stroke: '#555', size: 30, space: 70, values: (_u, vals) => vals.map(clock) }, { stroke: '#555', size: 56, values: (_u, vals) => vals.map(compact) }],
          series: [{}, { label: props.series.name, stroke: '#2563eb', width: 1.5, fill: 'rgba(37, 99, 235, 0.08)' }],
        },
        data,
        el,
      );
    } else plot.current.setData(data);
  });
  useEffect(() => {
    const el = box.current;
    const resize = new ResizeObserver(() => {
      if (el !== null && plot.current !== undefined && el.clientWidth > 0) plot.current.setSize({ width: el.clientWidth, height: 140 });
    });
    if (el !== null) resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
    };
  }, []);
  const last = props.series.samples[props.series.samples.length - 1];
  return (
    <figure class="chart">
      <figcaption>
        <span class="mono">{props.series.name}</span> <span class="latest">{last === undefined ? 'no samples in the last hour' : `latest ${compact(last.value)}`}</span>
      </figcaption>
      <div ref={box} role="img" aria-label={`${props.series.name} over the last hour: ${props.series.samples.length} samples${last !== undefined ? `, latest ${last.value}` : ''}`} />
    </figure>
  );
}

export function MetricsPanel(props: { hostId: string }) {
  const [series, setSeries] = useState<Series[] | undefined>();
  const [more, setMore] = useState(0);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function load(): Promise<void> {
      try {
        const { names } = await get<{ names: string[] }>(`/admin/agents/${props.hostId}/metrics`);
        const shown = names.slice(0, MAX_CHARTS);
        const from = new Date(Date.now() - 3600_000).toISOString();
        const all = await Promise.all(shown.map((name) => get<Series>(`/admin/agents/${props.hostId}/metrics${qs({ name, from, limit: 2000 })}`)));
        if (stop) return;
        setSeries(all);
        setMore(names.length - shown.length);
        setError(undefined);
      } catch (e) {
        if (!stop) setError(e instanceof ApiError ? e.message : String(e));
      }
      if (!stop) timer = setTimeout(() => void load(), REFRESH_MS);
    }
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [props.hostId]);
  return (
    <section aria-labelledby="h-metrics" class="card">
      <h2 id="h-metrics">Metrics (last hour)</h2>
      <ErrorText error={error} />
      {series === undefined ? <p>Loading…</p> : series.length === 0 ? <p>No metrics from this host yet.</p> : (
        <div class="charts">
          {series.map((s) => (
            <Chart key={s.name} series={s} />
          ))}
        </div>
      )}
      {more > 0 && <p class="help">{more} more metric names not charted.</p>}
    </section>
  );
}
