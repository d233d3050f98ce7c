import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MODEL_MAX_BYTES,
  parseCheckpointSettings,
  parseCheckpoints,
  parseModelMaxBytes,
  parseModelsDir,
  parseServerList,
  parseStallMs,
} from '../src/comfyui-settings.ts';

describe('COMFYUI_URLS', () => {
  it('names a server as given, or by its host:port', () => {
    expect(parseServerList('gpu-1=http://10.0.0.5:8188, http://10.0.0.6:8188/')).toEqual([
      { name: 'gpu-1', url: 'http://10.0.0.5:8188' },
      { name: '10.0.0.6:8188', url: 'http://10.0.0.6:8188' },
    ]);
  });

  it('keeps a path prefix and forms a group from a name given twice', () => {
    expect(parseServerList('big=https://a.internal/comfy/,big=http://b.internal:8188')).toEqual([
      { name: 'big', url: 'https://a.internal/comfy' },
      { name: 'big', url: 'http://b.internal:8188' },
    ]);
  });

  it('is empty when unset or blank', () => {
    expect(parseServerList(undefined)).toEqual([]);
    expect(parseServerList(' , ')).toEqual([]);
  });

  it('refuses what is not a server, naming the setting and the part', () => {
    expect(() => parseServerList('gpu-1=10.0.0.5')).toThrow(
      'COMFYUI_URLS: "gpu-1=10.0.0.5" is not URL or NAME=URL',
    );
    expect(() => parseServerList('ftp://a:21')).toThrow('must be an http:// or https:// URL');
    expect(() => parseServerList('http://u:p@a:8188')).toThrow('plain base URL');
    expect(() => parseServerList('gpu 1=http://a:8188')).toThrow('server name "gpu 1" may hold only');
    expect(() => parseServerList('http://a:8188,x=http://a:8188/')).toThrow('http://a:8188 is listed twice');
  });
});

describe('COMFYUI_CHECKPOINTS', () => {
  it('maps model ids to checkpoint files', () => {
    expect(parseCheckpoints('sd1.5=random-sd15.safetensors, sdxl = sd_xl_base_1.0.safetensors')).toEqual({
      'sd1.5': 'random-sd15.safetensors',
      sdxl: 'sd_xl_base_1.0.safetensors',
    });
    expect(parseCheckpoints(undefined)).toEqual({});
  });

  it('refuses a pair without both halves, or an id given twice', () => {
    expect(() => parseCheckpoints('sdxl')).toThrow(
      'COMFYUI_CHECKPOINTS: "sdxl" is not <model id>=<checkpoint file>',
    );
    expect(() => parseCheckpoints('=a.safetensors')).toThrow('is not <model id>=<checkpoint file>');
    expect(() => parseCheckpoints('a=x.ckpt,a=y.ckpt')).toThrow('model id "a" is listed twice');
  });

  it('maps a checkpoint per role, and declares the family of an id of the operator', () => {
    const settings = parseCheckpointSettings(
      [
        'sd1.5=random-sd15.safetensors',
        'sd1.5:inpainting=sd15-inpainting.safetensors',
        'sdxl:inpainting = sd_xl_inpaint_0.1.safetensors',
        'sdxl:lightning=juggernaut-lightning.safetensors',
        'flux:dev=flux1-dev-fp8.safetensors',
        'my-xl:sdxl=juggernautXL.safetensors',
        'my-xl:inpainting=juggernautXL-inpainting.safetensors',
        'my-15=dreamshaper8.safetensors',
      ].join(','),
    );
    expect(settings.checkpoints).toEqual({
      'sd1.5': 'random-sd15.safetensors',
      'sd1.5:inpainting': 'sd15-inpainting.safetensors',
      'sdxl:inpainting': 'sd_xl_inpaint_0.1.safetensors',
      // The roles that were model ids of their own keep those keys.
      'sdxl-lightning': 'juggernaut-lightning.safetensors',
      'flux-dev': 'flux1-dev-fp8.safetensors',
      'my-xl': 'juggernautXL.safetensors',
      'my-xl:inpainting': 'juggernautXL-inpainting.safetensors',
      'my-15': 'dreamshaper8.safetensors',
    });
    // An undeclared id has no family: it is not refused before its graph runs.
    expect(settings.families).toEqual({ 'my-xl': 'sdxl' });
    // Any family of the profiles may be declared, and each SD family's LCM LoRA mapped.
    expect(
      parseCheckpointSettings(
        'my-turbo:sdxl-turbo=t.safetensors,my-light:sdxl-lightning=l.safetensors,my-3:sd3=s.safetensors,sd1.5:lcm=lcm15.safetensors,sdxl:lcm=lcmxl.safetensors',
      ),
    ).toEqual({
      checkpoints: {
        'my-turbo': 't.safetensors',
        'my-light': 'l.safetensors',
        'my-3': 's.safetensors',
        'sd1.5:lcm': 'lcm15.safetensors',
        'sdxl:lcm': 'lcmxl.safetensors',
      },
      families: { 'my-turbo': 'sdxl-turbo', 'my-light': 'sdxl-lightning', 'my-3': 'sd3' },
    });
    // A built-in id may say its own family; the values of earlier releases mean what they meant.
    expect(parseCheckpointSettings('sdxl:sdxl=a.safetensors')).toEqual({
      checkpoints: { sdxl: 'a.safetensors' },
      families: {},
    });
    expect(
      parseCheckpoints('sdxl-lightning=l.safetensors,flux-schnell=s.safetensors,flux-dev=d.safetensors'),
    ).toEqual({
      'sdxl-lightning': 'l.safetensors',
      'flux-schnell': 's.safetensors',
      'flux-dev': 'd.safetensors',
    });
  });

  it('refuses an unknown role or family, a role of the wrong id, and a role or id given twice', () => {
    expect(() => parseCheckpoints('sdxl:inpaint=x.safetensors')).toThrow(
      'COMFYUI_CHECKPOINTS: "sdxl:inpaint=x.safetensors": "inpaint" is neither a model family (sd1.5, sdxl, sdxl-lightning, sdxl-turbo, sd3, sd3.5) nor a role (inpainting, lightning, dev, schnell, lcm)',
    );
    expect(() => parseCheckpoints('sd1.5:lightning=x.safetensors')).toThrow(
      'the lightning role (/instamodel/v1) is one of sdxl, not of "sd1.5"',
    );
    expect(() => parseCheckpoints('flux:inpainting=x.safetensors')).toThrow(
      'the inpainting role (/sd/inpainting/v1, /sdxl/inpainting/v1, /outpainting/v1 and the repaint of /bgchanger/v1, /modelswitch/v1, /inpaint_anything/v1) is one of sd1.5, sdxl, a mapped SD model id, not of "flux"',
    );
    expect(() => parseCheckpoints('sdxl:dev=x.safetensors')).toThrow('the dev role');
    expect(() => parseCheckpoints('sdxl:sd1.5=x.safetensors')).toThrow(
      'COMFYUI_CHECKPOINTS: "sdxl:sd1.5=x.safetensors": model id "sdxl" is the built-in sdxl model',
    );
    expect(() => parseCheckpoints('sd3:sdxl=x.safetensors')).toThrow(
      'model id "sd3" is the built-in sd3 model',
    );
    expect(() => parseCheckpoints('sd3.5:sd3.5=x.safetensors')).toThrow("is a pipeline's own model");
    expect(() => parseCheckpoints('flux:lcm=x.safetensors')).toThrow(
      'the lcm role (scheduler LCMScheduler (the LCM LoRA, folder loras)) is one of sd1.5, sdxl, not of "flux"',
    );
    expect(() => parseCheckpoints(':inpainting=x.safetensors')).toThrow(
      'is not <model id>=<checkpoint file>',
    );
    expect(() => parseCheckpoints('a:b:c=x.safetensors')).toThrow('is not <model id>=<checkpoint file>');
    expect(() => parseCheckpoints('mine:inpainting=x.safetensors')).toThrow(
      'COMFYUI_CHECKPOINTS: "mine:inpainting=x.safetensors" gives model id "mine" a role, but "mine" itself is not mapped',
    );
    expect(() => parseCheckpoints('sdxl-lightning=a.safetensors,sdxl:lightning=b.safetensors')).toThrow(
      'COMFYUI_CHECKPOINTS: the lightning role of "sdxl" is listed twice ("sdxl-lightning=a.safetensors", "sdxl:lightning=b.safetensors")',
    );
    expect(() => parseCheckpoints('sdxl:inpainting=a.safetensors,sdxl:inpainting=b.safetensors')).toThrow(
      'the inpainting role of "sdxl" is listed twice',
    );
    expect(() => parseCheckpoints('mine=a.safetensors,mine:sdxl=b.safetensors')).toThrow(
      'model id "mine" is listed twice ("mine=a.safetensors", "mine:sdxl=b.safetensors")',
    );
  });
});

describe('COMFYUI_MODELS_DIR and MODEL_MAX_BYTES', () => {
  const servers = parseServerList('gpu-1=http://a:8188,gpu-2=http://b:8188');

  it('reads one shared folder and folders of named servers', () => {
    expect(parseModelsDir('/mnt/models/', servers)).toEqual({ shared: '/mnt/models', byServer: {} });
    expect(parseModelsDir('gpu-1=/mnt/a/models, gpu-2=/mnt/b/models,/srv/models', servers)).toEqual({
      shared: '/srv/models',
      byServer: { 'gpu-1': '/mnt/a/models', 'gpu-2': '/mnt/b/models' },
    });
    expect(parseModelsDir(undefined, servers)).toBeNull();
    expect(parseModelsDir(' ', servers)).toBeNull();
  });

  it('refuses a relative path, a name not in COMFYUI_URLS, and doubles, naming the setting', () => {
    expect(() => parseModelsDir('models', servers)).toThrow(
      'COMFYUI_MODELS_DIR: "models" is not an absolute path or NAME=/absolute/path',
    );
    expect(() => parseModelsDir('gpu-9=/mnt/x', servers)).toThrow(
      'COMFYUI_MODELS_DIR: "gpu-9" is not the name of a server in COMFYUI_URLS',
    );
    expect(() => parseModelsDir('/a,/b', servers)).toThrow('more than one shared folder');
    expect(() => parseModelsDir('gpu-1=/a,gpu-1=/b', servers)).toThrow('server "gpu-1" is listed twice');
  });

  it('caps model files at 8 GiB unless MODEL_MAX_BYTES says otherwise', () => {
    expect(parseModelMaxBytes(undefined)).toBe(DEFAULT_MODEL_MAX_BYTES);
    expect(DEFAULT_MODEL_MAX_BYTES).toBe(8 * 1024 ** 3);
    expect(parseModelMaxBytes('1048576')).toBe(1_048_576);
    expect(() => parseModelMaxBytes('8G')).toThrow(
      'MODEL_MAX_BYTES=8G is not a positive whole number of bytes',
    );
    expect(() => parseModelMaxBytes('0')).toThrow('MODEL_MAX_BYTES=0');
  });
});

describe('COMFYUI_STALL_SECONDS', () => {
  it('is five minutes by default, takes seconds (fractions too), and refuses what is no positive number', () => {
    expect(parseStallMs(undefined)).toBe(300_000);
    expect(parseStallMs(' ')).toBe(300_000);
    expect(parseStallMs('90')).toBe(90_000);
    expect(parseStallMs('0.5')).toBe(500);
    expect(() => parseStallMs('0')).toThrow('COMFYUI_STALL_SECONDS=0 is not a positive number of seconds');
    expect(() => parseStallMs('5m')).toThrow('COMFYUI_STALL_SECONDS=5m');
  });
});
