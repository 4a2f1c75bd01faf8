// Figures for the report: each suite appends one JSON line per measurement to
// $FAULTS_FIGURES (default <tmpdir>/cortex-faults-figures.jsonl) and prints it.
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const FIGURES_FILE = process.env['FAULTS_FIGURES'] ?? join(tmpdir(), 'cortex-faults-figures.jsonl');

export function recordFigure(name: string, values: Record<string, unknown>): void {
  const line = JSON.stringify({ name, at: new Date().toISOString(), full: process.env['FAULTS_FULL'] === '1', ...values });
  try {
    appendFileSync(FIGURES_FILE, `${line}\n`);
  } catch {
    // figures are informational
  }
  if (process.env['FAULTS_QUIET'] !== '1') console.log(`[figure] ${line}`);
}
