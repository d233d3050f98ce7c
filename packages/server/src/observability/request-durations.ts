import type { Metric, Registry } from 'prom-client';

/** One series: its labels, how many observations fell in each bucket (not summed up), their sum and count. */
interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly inBucket: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram of answered requests by method, route pattern and status. Every request
 * observes it, so a series is found by one string key, where prom-client's `Histogram` checks and
 * hashes a label object on each observation. It hands the registry the values `Histogram` does,
 * in the same order, so the exposition text is the same.
 */
export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const inBucket = this.upperBounds.map(() => 0);
      series = { labels: { method, route, status: String(status) }, inBucket, sum: 0, count: 0 };
      this.series.set(key, series);
    }
    const bucket = this.upperBounds.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) series.inBucket[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  reset(): void {
    this.series.clear();
  }

  /** The series as the registry writes them: labels shared by a series apart from its own `le`. */
  getForPromString() {
    const bucketName = `${this.name}_bucket`;
    const values: {
      labels: Record<string, string | number>;
      sharedLabels: Record<string, string>;
      value: number;
      metricName: string;
      exemplar?: null;
    }[] = [];
    for (const { labels, inBucket, sum, count } of this.series.values()) {
      let below = 0;
      this.upperBounds.forEach((bound, i) => {
        below += inBucket[i]!;
        values.push({
          labels: { le: bound },
          sharedLabels: labels,
          value: below,
          metricName: bucketName,
          exemplar: null,
        });
      });
      values.push({
        labels: { le: '+Inf' },
        sharedLabels: labels,
        value: count,
        metricName: bucketName,
        exemplar: null,
      });
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with every label in `labels` (the registry's JSON form). */
  async get() {
    const metric = this.getForPromString();
    return {
      ...metric,
      values: metric.values.map(({ labels, sharedLabels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
