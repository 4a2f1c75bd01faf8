// package-lock.json must match package.json, or `npm install` rewrites it on a fresh
// clone (it had lost the cortex-conformance bin).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const read = (f: string) => JSON.parse(readFileSync(join(ROOT, f), 'utf8')) as Record<string, unknown>;

it("the lock's root package states exactly package.json's name, version, bins, engines, workspaces and dependencies", () => {
  const pkg = read('package.json');
  const lock = read('package-lock.json');
  expect(lock['name']).toBe(pkg['name']);
  expect(lock['version']).toBe(pkg['version']);
  const root = (lock['packages'] as Record<string, Record<string, unknown>>)[''] as Record<string, unknown>;
  for (const key of ['name', 'version', 'license', 'bin', 'engines', 'workspaces', 'dependencies', 'devDependencies', 'optionalDependencies']) {
    expect(root[key], key).toEqual(pkg[key]);
  }
  // every dependency is locked
  const packages = lock['packages'] as Record<string, unknown>;
  for (const deps of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    for (const name of Object.keys((pkg[deps] ?? {}) as Record<string, string>)) expect(packages[`node_modules/${name}`], name).toBeDefined();
  }
});
