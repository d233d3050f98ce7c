/**
 * The progress a cpu job reports: the share of its work already done, never of work only begun.
 * A job is a few steps, each given its expected cost (any unit: they are shares of the sum); a step
 * counts once it has finished, or part by part (upscaling patch by patch). A status read turns
 * progress into `eta_seconds`, so a step claimed before it ran would promise a time it cannot keep.
 */
export class JobProgress<Step extends string> {
  private readonly total: number;
  private done = 0;

  constructor(
    private readonly report: (fraction: number, message?: string) => void,
    private readonly costs: Readonly<Record<Step, number>>,
  ) {
    this.total = Object.values<number>(costs).reduce((sum, cost) => sum + cost, 0) || 1;
  }

  /** `step` has finished. */
  finished(step: Step, message?: string): void {
    this.done += this.costs[step];
    this.report(Math.min(1, this.done / this.total), message);
  }

  /** `fraction` of `step` has finished (not added to earlier parts: the step's own share so far). */
  partly(step: Step, fraction: number, message?: string): void {
    this.report(Math.min(1, (this.done + this.costs[step] * fraction) / this.total), message);
  }
}

/**
 * What a step costs per pixel, in nanoseconds of one core as measured on the 2-core test machine:
 * close enough to weigh the steps of one job against each other.
 */
export const NS_PER_PIXEL = {
  /** Decoding a PNG or JPEG. */
  decode: 10,
  /** Encoding a PNG, a resize before it included. */
  encode: 40,
  /** One ESRGAN pass, per pixel it makes: slim about 1 s a megapixel, medium about 4 s. */
  esrganSlim: 1_000,
  esrganMedium: 4_000,
} as const;
