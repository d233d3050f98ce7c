import { describe, expect, it } from 'vitest';
import { startBanner } from '../src/start-banner.ts';

const base = {
  apiUrl: 'http://127.0.0.1:8000',
  key: null,
  owner: null,
  docsLine: 'Documentation: http://127.0.0.1:3000',
  docsUrl: 'http://127.0.0.1:3000',
};

describe('the banner of npm start', () => {
  it('names the pipelines the sandbox answers with placeholders, and where real images come from', () => {
    const banner = startBanner({
      ...base,
      engines: [
        { name: 'cpu', pipelines: ['/bgremover/v1'] },
        {
          name: 'sandbox',
          pipelines: ['/sd/text2image/v1', '/sdxl/text2image/v1', '/logo/v1', '/relight/v1', '/x/v1'],
        },
      ],
    });
    expect(banner).toContain(
      'Placeholders: 5 pipelines answer with labelled placeholder images, not real ones (engine sandbox): ' +
        '/sd/text2image/v1, /sdxl/text2image/v1, /logo/v1, /relight/v1 and 1 more ' +
        '(GET http://127.0.0.1:8000/health lists them)\n' +
        '  For real images, set COMFYUI_URLS to your ComfyUI servers: ' +
        'http://127.0.0.1:3000/Deployment/Run-diffusion-on-ComfyUI\n',
    );
    expect(banner).not.toContain('/bgremover/v1');
  });

  it('has no placeholder line when every engine is real', () => {
    const banner = startBanner({ ...base, engines: [{ name: 'comfyui', pipelines: ['/sd/text2image/v1'] }] });
    expect(banner).not.toContain('Placeholders');
  });

  it('fills in the owner id of the keys create command on a later start', () => {
    const owner = { id: '0b9f6f3c-1d2e-4f5a-8b7c-6d5e4f3a2b1c', name: 'default' };
    const banner = startBanner({ ...base, owner, engines: [] });
    expect(banner).toContain(`  npm run --silent cli -- keys create --owner ${owner.id}\n`);
    expect(banner).not.toContain('<owner-id>');
  });
});
