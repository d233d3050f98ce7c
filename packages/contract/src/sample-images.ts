/**
 * Sample images the API serves itself, at `<public url>/files/samples/<file>`, so that an example
 * request runs as it is on any installation: the worker reads the API's own `/files/` links from
 * its store, never over the network, so no SSRF rule stands in the way and nothing outside the
 * machine is needed. The examples of the contract (examples.ts) keep their illustrative
 * `https://images.example.com/<name>.png` addresses; `withSampleImages` swaps them for these.
 */

/** The files, by what they show. */
export const SAMPLE_IMAGES = {
  /** A man at a dinner table, facing the camera (a photo of @vladmandic/human's MIT sample sheet). */
  portrait: 'portrait.jpg',
  /** A glossy bottle-like object on a studio backdrop. */
  product: 'product.jpg',
  /** Sky, sun, hills and a lake. */
  landscape: 'landscape.jpg',
  /** White where landscape.jpg is to be painted again (its size). */
  mask: 'mask.png',
  /** The product, 128 px square: for superresolution and upscaling. */
  small: 'small.jpg',
} as const;

export const SAMPLE_IMAGES_PATH = '/files/samples/';

/** Which sample stands in for each image name of the examples; any other shows the landscape. */
const SAMPLE_FOR: Readonly<Record<string, keyof typeof SAMPLE_IMAGES>> = {
  face: 'portrait',
  portrait: 'portrait',
  person: 'portrait',
  model: 'portrait',
  'me-1': 'portrait',
  'me-2': 'portrait',
  'room-mask': 'mask',
  small: 'small',
  product: 'product',
  sketch: 'product',
  edges: 'product',
  'logo-sketch': 'product',
  trousers: 'product',
  shirt: 'product',
  dress: 'product',
  outfit: 'portrait',
};

const EXAMPLE_IMAGE = /^https:\/\/images\.example\.com\/([a-z0-9-]+)\.png$/;

/** The URL of a sample image on the API at `apiUrl`. */
export function sampleImageUrl(apiUrl: string, sample: keyof typeof SAMPLE_IMAGES): string {
  return `${apiUrl.replace(/\/+$/, '')}${SAMPLE_IMAGES_PATH}${SAMPLE_IMAGES[sample]}`;
}

/**
 * A copy of an example body whose `images.example.com` addresses (in strings and lists of strings)
 * are the matching sample images of the API at `apiUrl`.
 */
export function withSampleImages<T>(example: T, apiUrl: string): T {
  const swap = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const name = EXAMPLE_IMAGE.exec(value)?.[1];
      return name === undefined ? value : sampleImageUrl(apiUrl, SAMPLE_FOR[name] ?? 'landscape');
    }
    if (Array.isArray(value)) return value.map(swap);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, swap(inner)]));
    }
    return value;
  };
  return swap(example) as T;
}
