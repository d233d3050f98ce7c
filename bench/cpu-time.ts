/**
 * CPU time per process, read from /proc (Linux), so a benchmark can say where each request's
 * CPU goes: the server, PostgreSQL, and the load generator itself. On 2 cores all three share the
 * same CPUs, so these figures bound what any throughput ratio can be. Elsewhere (no /proc) every
 * reading is null and the benchmark reports no breakdown.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of one process, in microseconds; null when it is gone or /proc is missing. */
function processCpuUs(pid: number | 'self'): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start at state; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks();
  } catch {
    return null;
  }
}

/**
 * The postmaster of a data directory and its children (backends, WAL writer, checkpointer...).
 * A backend that exits between two samples takes its CPU time with it, so pools should stay
 * connected through a measurement (the benchmarks' pools do).
 */
export function postgresPids(pgDataDir: string): number[] {
  const pidFile = path.join(pgDataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export type CpuGroups = Record<string, () => readonly (number | 'self')[]>;

/** Total CPU microseconds of each named group of processes at this moment. */
export function sampleCpu(groups: CpuGroups): Record<string, number | null> {
  const sample: Record<string, number | null> = {};
  for (const [name, group] of Object.entries(groups)) {
    const pids = group();
    let total: number | null = pids.length === 0 ? null : 0;
    for (const pid of pids) {
      const us = processCpuUs(pid);
      if (us === null) {
        total = null;
        break;
      }
      total = (total ?? 0) + us;
    }
    sample[name] = total;
  }
  return sample;
}

/** CPU microseconds per request of each group between two samples. */
export function cpuPerRequest(
  before: Record<string, number | null>,
  after: Record<string, number | null>,
  requests: number,
): Record<string, number> | null {
  const perRequest: Record<string, number> = {};
  for (const [name, start] of Object.entries(before)) {
    const end = after[name];
    if (start === null || end === null || end === undefined || requests === 0) return null;
    perRequest[name] = Math.round((end - start) / requests);
  }
  return perRequest;
}

/**
 * CPU microseconds every process of the machine has used so far, from /proc/stat (all cores, idle
 * and I/O wait left out); null without /proc. Beside a group's own time it tells whether the cores
 * were busy with the benchmark or with other work on the machine.
 */
export function machineBusyUs(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.slice(0, 8).reduce((sum, n) => sum + n, 0);
    const idle = fields[3]! + fields[4]!;
    return ((total - idle) * 1e6) / clockTicks();
  } catch {
    return null;
  }
}
