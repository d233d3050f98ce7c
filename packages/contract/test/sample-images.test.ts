import { describe, expect, it } from 'vitest';
import { endpoints } from '../src/endpoints.ts';
import { SAMPLE_IMAGES, sampleImageUrl, withSampleImages } from '../src/sample-images.ts';

const API = 'http://127.0.0.1:8000';

describe('withSampleImages', () => {
  it('leaves no example image outside the API: every one becomes a sample image the API serves', () => {
    const samples = new Set(Object.values(SAMPLE_IMAGES).map((file) => `${API}/files/samples/${file}`));
    for (const endpoint of endpoints) {
      if (endpoint.example === undefined) continue;
      const text = JSON.stringify(withSampleImages(endpoint.example, `${API}/`));
      expect(text, endpoint.path).not.toContain('images.example.com');
      for (const [url] of text.matchAll(/https?:\/\/[^"]+\.(?:png|jpg)/g)) {
        expect(samples.has(url), `${endpoint.path}: ${url}`).toBe(true);
      }
    }
  });

  it('picks a sample that fits the name, and keeps every other value and the original as they are', () => {
    const example = {
      input_face: 'https://images.example.com/face.png',
      mask_image: 'https://images.example.com/room-mask.png',
      init_images: ['https://images.example.com/small.png', 'https://images.example.com/street.png'],
      model_url: 'https://models.example.com/watercolour.safetensors',
      samples: 2,
    };
    const copy = structuredClone(example);
    expect(withSampleImages(example, API)).toEqual({
      input_face: sampleImageUrl(API, 'portrait'),
      mask_image: sampleImageUrl(API, 'mask'),
      init_images: [sampleImageUrl(API, 'small'), sampleImageUrl(API, 'landscape')],
      model_url: 'https://models.example.com/watercolour.safetensors',
      samples: 2,
    });
    expect(example).toEqual(copy);
  });
});
