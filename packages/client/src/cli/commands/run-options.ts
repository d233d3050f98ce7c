/** The flags of `imagegen run` that are not request fields. */
export const RUN_OPTIONS = [
  { flag: '--out', takesValue: true, usage: '--out <folder>', help: 'save the outputs into this folder' },
  { flag: '--json', takesValue: false, usage: '--json', help: 'print the final status as one JSON object' },
  {
    flag: '--timeout',
    takesValue: true,
    usage: '--timeout <seconds>',
    help: 'give up waiting after this long (default 600; 0: no limit); exits 3',
  },
  {
    flag: '--cancel-on-timeout',
    takesValue: false,
    usage: '--cancel-on-timeout',
    help: 'cancel the task when the timeout passes (default: it goes on)',
  },
  {
    flag: '--wait',
    takesValue: false,
    usage: '--no-wait',
    help: 'only submit: print the task id and exit',
  },
  {
    flag: '--idempotency-key',
    takesValue: true,
    usage: '--idempotency-key <key>',
    help: 'the key of this submission (default: a new one); resubmitting with it answers the same task',
  },
  {
    flag: '--cancel-after',
    takesValue: true,
    usage: '--cancel-after <duration>',
    help: "the task's deadline on the API (30s, 5m, 1h30m; 1s to 24h): past it the task fails, queued or running",
  },
  {
    flag: '--events',
    takesValue: true,
    usage: '--events <start,progress,completed>',
    help: 'which moments call --webhook (default: completed); the --webhook-events-filter field, comma-separated',
  },
  {
    flag: '--base-url',
    takesValue: true,
    usage: '--base-url <url>',
    help: 'the API (default: the settings)',
  },
  { flag: '--help', takesValue: false, usage: '--help', help: "this pipeline's fields" },
] as const;
