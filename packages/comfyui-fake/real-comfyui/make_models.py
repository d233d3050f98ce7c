"""Random-weight models of every family the comfyui engine loads, made with ComfyUI's own model code.

Run with the ComfyUI directory as the working directory (its `comfy` package on sys.path) and the
Python that runs that ComfyUI:

    python3 make_models.py MODELS_DIR [--only NAME,...] [--force] [--list]

Each model is built from ComfyUI's (or the node pack's, or spandrel's) own classes with PyTorch's
default initialisers and a fixed seed, saved as fp16 (T5-XXL as fp8: see below), then loaded back
the way the loader node loads it (ComfyUI's own detection), failing on a wrong family or on any
missing or unexpected key. Outputs drawn with them are noise, and they execute exactly as the real
models do. A file that exists is left alone unless --force; several names of one model are hard
links to one file.

Reduced models (the full ones do not fit a 24 GB, 2-core machine; ComfyUI still detects the family):
  * SDXL: the Segmind-Vega layout of ComfyUI's list (transformer depth [0,0,1,1,2,2] instead of
    [0,0,2,2,10,10]; same width, same CLIP-L + CLIP-G, same VAE): ComfyUI detects `Segmind_Vega`,
    a subclass of `SDXL` that loads and samples as SDXL.
  * SDXL ControlNets: the same Vega depth.
  * SD3 / SD3.5: MMDiT depth 4 / 6 (ComfyUI derives the width from the depth: 64 x depth), the
    SD3.5 one with RMS q/k norms as SD3.5 has; the real VAE (16 channels).
  * Flux dev / schnell: 1 double block and 1 single block (19 and 38 in the real ones), real width.
  * T5-XXL: full size (ComfyUI builds all 24 layers from its own config whatever the file holds),
    stored as float8_e4m3fn as ComfyUI's own t5xxl_fp8 files are (4.9 GB instead of 9.5 GB).
Full size: SD1.5, CLIP-L, CLIP-G, the VAEs, SD1.5 ControlNets, CLIP-ViT-H and ViT-bigG vision, IP-Adapters,
PhotoMaker, LoRAs (rank 4). ESRGAN: 16 filters, 1 block (spandrel detects ESRGAN and the scale).
"""
import argparse
import logging
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.getcwd())
from comfy.cli_args import args  # noqa: E402

args.cpu = True
import comfy.model_management  # noqa: E402,F401
import comfy.clip_model  # noqa: E402
import comfy.clip_vision  # noqa: E402
import comfy.controlnet  # noqa: E402
import comfy.lora  # noqa: E402
import comfy.model_detection  # noqa: E402
import comfy.ops  # noqa: E402
import comfy.sd  # noqa: E402
import comfy.sd1_clip  # noqa: E402
import comfy.sdxl_clip  # noqa: E402
import comfy.supported_models  # noqa: E402
import comfy.utils  # noqa: E402
from comfy.ldm.models.autoencoder import AutoencoderKL  # noqa: E402

SEED = 1234
NOTE = 'random weights (torch default init, seed {seed}); {what}; NOT a trained model'

SD15_UNET = {
    'use_checkpoint': False, 'image_size': 32, 'out_channels': 4, 'use_spatial_transformer': True, 'legacy': False,
    'adm_in_channels': None, 'in_channels': 4, 'model_channels': 320,
    'num_res_blocks': [2, 2, 2, 2], 'transformer_depth': [1, 1, 1, 1, 1, 1, 0, 0], 'channel_mult': [1, 2, 4, 4],
    'transformer_depth_middle': 1, 'use_linear_in_transformer': False, 'context_dim': 768, 'num_heads': 8,
    'transformer_depth_output': [1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
    'use_temporal_attention': False, 'use_temporal_resblock': False,
}
# SDXL's UNet at Segmind-Vega's depth (SDXL: transformer_depth [0,0,2,2,10,10], middle 10, output 0,0,0,2,2,2,10,10,10).
SDXL_VEGA_UNET = {
    'use_checkpoint': False, 'image_size': 32, 'out_channels': 4, 'use_spatial_transformer': True, 'legacy': False,
    'num_classes': 'sequential', 'adm_in_channels': 2816, 'in_channels': 4, 'model_channels': 320,
    'num_res_blocks': [2, 2, 2], 'transformer_depth': [0, 0, 1, 1, 2, 2], 'channel_mult': [1, 2, 4],
    'transformer_depth_middle': 1, 'use_linear_in_transformer': True, 'context_dim': 2048, 'num_head_channels': 64,
    'transformer_depth_output': [0, 0, 0, 1, 1, 1, 2, 2, 2],
    'use_temporal_attention': False, 'use_temporal_resblock': False,
}
VAE_DDCONFIG = {'double_z': True, 'z_channels': 4, 'resolution': 256, 'in_channels': 3, 'out_ch': 3, 'ch': 128,
                'ch_mult': [1, 2, 4, 4], 'num_res_blocks': 2, 'attn_resolutions': [], 'dropout': 0.0}
VAE16_DDCONFIG = {**VAE_DDCONFIG, 'z_channels': 16}

F16 = torch.float16
# The snapshot name of the models written into Hugging Face's cache.
SNAPSHOT = 'imagegen-random-0000000000000000000000000000'


# ---------------------------------------------------------------------------------------------------- helpers

class LoadLog(logging.Handler):
    """Collects what ComfyUI logs while loading, to fail on missing/unexpected keys."""

    WORDS = ('missing', 'unexpected', 'left over', 'not loaded')

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())

    def __enter__(self):
        self.records = []
        logging.getLogger().addHandler(self)
        logging.getLogger().setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        logging.getLogger().removeHandler(self)

    def problems(self):
        return [r for r in self.records if any(w in r.lower() for w in self.WORDS)]


def check_clean(log, what):
    problems = log.problems()
    for p in problems:
        print('  load warning:', p[:400])
    if problems:
        raise SystemExit(f'{what} did not load cleanly')


def torch_default_init(module: torch.nn.Module, seed: int = SEED) -> None:
    """ComfyUI's ops make reset_parameters() a no-op; call torch.nn's own initialisers instead.
    Parameters no torch.nn class initialises (norm scales, positional tables, learnt queries) get
    ones when they are 1-D scales, else N(0, 0.02)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        tensors = [t for _, t in module.named_parameters()] + \
                  [t for _, t in module.named_buffers() if t.is_floating_point()]
        for t in tensors:
            t.fill_(float('nan'))
        for m in module.modules():
            for cls in type(m).__mro__:
                if cls.__module__.startswith('torch.nn.modules') and 'reset_parameters' in cls.__dict__:
                    cls.reset_parameters(m)
                    break
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if not t.is_floating_point() or torch.isfinite(t).all():
                continue
            if name.endswith('logit_scale'):
                t.fill_(math.log(1 / 0.07))
            elif t.dim() == 1 and (name.endswith('scale') or name.endswith('weight')):
                t.fill_(1.0)
            else:
                t.normal_(0.0, 0.02)


def fp16(sd):
    return {k: (v.to(F16) if v.is_floating_point() else v).contiguous() for k, v in sd.items()}


def save(sd, path, what, pth=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    if pth:
        torch.save(sd, tmp)
    else:
        # one metadata entry only: several come out in hash-map order, so the file's bytes would vary
        comfy.utils.save_torch_file(sd, tmp, metadata={'imagegen_real_comfyui': NOTE.format(seed=SEED, what=what)})
    os.replace(tmp, path)
    n = sum(v.numel() for v in _tensors(sd))
    print(f'  saved {path}: {n / 1e6:.1f} M params, {os.path.getsize(path) / 2**20:.1f} MiB')


def _tensors(sd):
    for v in sd.values():
        if isinstance(v, dict):
            yield from _tensors(v)
        elif isinstance(v, torch.Tensor):
            yield v


def config_from_unet(unet_config, expect):
    config = comfy.model_detection.model_config_from_unet_config(dict(unet_config))
    assert config is not None and type(config).__name__ == expect, (type(config).__name__, expect)
    return config


def build_diffusion_model(unet_config, expect, seed=SEED):
    config = config_from_unet(unet_config, expect)
    config.set_inference_dtype(F16, None)
    model = config.get_model({}, device='cpu')
    torch_default_init(model.diffusion_model, seed)
    return model


def sd_vae(ddconfig, seed=SEED):
    vae = AutoencoderKL(ddconfig=ddconfig, embed_dim=ddconfig['z_channels']).to(F16)
    torch_default_init(vae, seed)
    return vae


def verify_checkpoint(path, family, clip=True):
    with LoadLog() as log:
        out = comfy.sd.load_checkpoint_guess_config(path, output_vae=True, output_clip=clip,
                                                    embedding_directory=None)
    mp, clip_obj, vae = out[0], out[1], out[2]
    config = mp.model.model_config
    assert isinstance(config, family), (type(config).__name__, family.__name__)
    print(f'  detected: {type(config).__name__} (a {family.__name__}) {type(mp.model).__name__}',
          '| clip:', type(clip_obj.cond_stage_model).__name__ if clip_obj else None,
          '| vae:', type(vae.first_stage_model).__name__, f'{vae.latent_channels} channels')
    check_clean(log, path)


# ---------------------------------------------------------------------------------------------------- checkpoints

def make_sd15(path):
    model = build_diffusion_model(SD15_UNET, 'SD15')
    clip = comfy.sd1_clip.SD1ClipModel(device='cpu', dtype=F16)
    torch_default_init(clip)
    sd = model.state_dict_for_saving(clip.state_dict(), sd_vae(VAE_DDCONFIG).state_dict(), None)
    save(fp16(sd), path, 'SD1.5 architecture')


def make_sdxl(path):
    model = build_diffusion_model(SDXL_VEGA_UNET, 'Segmind_Vega')
    clip = comfy.sdxl_clip.SDXLClipModel(device='cpu', dtype=F16)
    torch_default_init(clip)
    sd = model.state_dict_for_saving(clip.state_dict(), sd_vae(VAE_DDCONFIG).state_dict(), None)
    del model, clip
    save(fp16(sd), path, 'SDXL architecture at Segmind-Vega depth')


def mmdit_config(depth, rms):
    hidden = 64 * depth
    config = {
        'in_channels': 16, 'patch_size': 2, 'out_channels': 16, 'depth': depth, 'input_size': None,
        'adm_in_channels': 2048,
        'context_embedder_config': {'target': 'torch.nn.Linear', 'params': {'in_features': 4096, 'out_features': hidden}},
        'num_patches': 36864, 'pos_embed_max_size': 192, 'pos_embed_scaling_factor': None,
    }
    if rms:
        config['qk_norm'] = 'rms'
    return config


def make_sd3(path, depth, rms, what):
    model = build_diffusion_model(mmdit_config(depth, rms), 'SD3')
    sd = model.state_dict_for_saving(None, sd_vae(VAE16_DDCONFIG).state_dict(), None)
    save(fp16(sd), path, what)


def flux_config(guidance):
    return {
        'image_model': 'flux', 'in_channels': 16, 'patch_size': 2, 'out_channels': 16, 'vec_in_dim': 768,
        'context_in_dim': 4096, 'hidden_size': 3072, 'mlp_ratio': 4.0, 'num_heads': 24, 'depth': 1,
        'depth_single_blocks': 1, 'axes_dim': [16, 56, 56], 'theta': 10000, 'qkv_bias': True,
        'guidance_embed': guidance,
    }


def make_flux(path, guidance):
    model = build_diffusion_model(flux_config(guidance), 'Flux' if guidance else 'FluxSchnell')
    save(fp16(model.diffusion_model.state_dict()), path,
         'Flux %s architecture, 1 double + 1 single block' % ('dev' if guidance else 'schnell'))


def verify_diffusion_model(path, expect):
    with LoadLog() as log:
        mp = comfy.sd.load_diffusion_model(path)
    name = type(mp.model.model_config).__name__
    assert name == expect, (name, expect)
    print(f'  detected: {name} {type(mp.model).__name__}')
    check_clean(log, path)


# ---------------------------------------------------------------------------------------------------- text encoders

def make_clip_l(path):
    clip = comfy.sd1_clip.SDClipModel(device='cpu', dtype=F16)
    torch_default_init(clip, SEED + 1)
    save(fp16(clip.transformer.state_dict()), path, 'CLIP ViT-L/14 text encoder')


def make_clip_g(path):
    clip = comfy.sdxl_clip.SDXLClipG(device='cpu', dtype=F16)
    torch_default_init(clip, SEED + 2)
    save(fp16(clip.transformer.state_dict()), path, 'OpenCLIP ViT-bigG/14 text encoder')


def write_random(path, module, draw, dtype, seed, what):
    """Every tensor of `module`'s state dict (a module built on the meta device: names and shapes
    only) drawn by draw(owner, name, shape, generator) in float32 and written straight to a
    safetensors file as `dtype`, one tensor in memory at a time: a model of several GB is never
    held at once."""
    import json
    tags = {torch.float8_e4m3fn: 'F8_E4M3', torch.float16: 'F16'}
    modules = dict(module.named_modules())
    names = sorted(module.state_dict(keep_vars=True).items())
    size = torch.tensor([], dtype=dtype).element_size()
    header, offset = {}, 0
    for name, p in names:
        n = p.numel() * size
        header[name] = {'dtype': tags[dtype], 'shape': list(p.shape), 'data_offsets': [offset, offset + n]}
        offset += n
    header['__metadata__'] = {'imagegen_real_comfyui': NOTE.format(seed=seed, what=what)}
    raw = json.dumps(header, separators=(',', ':')).encode()
    raw += b' ' * (-len(raw) % 8)
    gen = torch.Generator().manual_seed(seed)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(len(raw).to_bytes(8, 'little'))
        f.write(raw)
        for name, p in names:
            owner = modules[name.rsplit('.', 1)[0]] if '.' in name else module
            t = draw(owner, name, tuple(p.shape), gen)
            f.write(t.to(dtype).contiguous().view(torch.uint8).numpy().tobytes())
    os.replace(tmp, path)
    print(f'  saved {path}: {sum(p.numel() for _, p in names) / 1e6:.1f} M params, '
          f'{os.path.getsize(path) / 2**20:.1f} MiB')


def make_t5xxl(path):
    """T5-XXL's encoder, its tensor names and shapes from ComfyUI's own class built on the meta device
    (24 layers of 4096), each tensor drawn as torch.nn would and written in float8_e4m3fn."""
    import comfy.text_encoders.sd3_clip as sd3_clip
    with torch.device('meta'):
        t5 = sd3_clip.T5XXLModel(device='meta', dtype=torch.float32)

    def draw(owner, name, shape, gen):
        if isinstance(owner, torch.nn.Linear):
            bound = 1 / math.sqrt(shape[1])  # kaiming_uniform(a=sqrt(5)), as nn.Linear draws
            return torch.empty(shape).uniform_(-bound, bound, generator=gen)
        if isinstance(owner, torch.nn.Embedding):
            return torch.empty(shape).normal_(0, 1, generator=gen)
        return torch.ones(shape)  # T5's RMS norm weights

    write_random(path, t5.transformer, draw, torch.float8_e4m3fn, SEED + 3,
                 'T5-XXL encoder (24 layers, 4096), float8_e4m3fn')


def verify_text_encoders(paths, clip_type, expect):
    with LoadLog() as log:
        clip = comfy.sd.load_clip(ckpt_paths=paths, embedding_directory=None, clip_type=clip_type)
    name = type(clip.cond_stage_model).__name__
    print(f'  {[os.path.basename(p) for p in paths]} as {clip_type.name}: {name}')
    assert expect in name, (name, expect)
    check_clean(log, ', '.join(paths))


def make_flux_vae(path):
    save(fp16(sd_vae(VAE16_DDCONFIG, SEED + 4).state_dict()), path, 'Flux VAE (16 latent channels)')


def verify_vae(path, channels):
    with LoadLog() as log:
        vae = comfy.sd.VAE(sd=comfy.utils.load_torch_file(path))
    assert vae.latent_channels == channels, vae.latent_channels
    print(f'  VAE: {vae.latent_channels} latent channels')
    check_clean(log, path)


# ---------------------------------------------------------------------------------------------------- controlnets

def make_controlnet(path, unet_config, expect, prefix, what):
    config = config_from_unet(unet_config, expect).unet_config.copy()
    config.pop('out_channels')
    config['hint_channels'] = 3
    net = comfy.cldm.cldm.ControlNet(**config, dtype=F16, device='cpu', operations=comfy.ops.disable_weight_init)
    torch_default_init(net, SEED + 5)
    sd = {prefix + k: v for k, v in fp16(net.state_dict()).items()}
    save(sd, path, what, pth=path.endswith('.pth'))


def verify_controlnet(path, family):
    with LoadLog() as log:
        cn = comfy.controlnet.load_controlnet(path)
    print(f'  {type(cn).__name__}: {type(cn.control_model).__name__}, '
          f'model_channels {cn.control_model.model_channels}, hint {cn.control_model.input_hint_block[0].in_channels}')
    assert type(cn).__name__ == 'ControlNet'
    check_clean(log, path)
    config = comfy.model_detection.model_config_from_unet(comfy.utils.load_torch_file(path),
                                                           'control_model.' if path.endswith('.pth') else '', True)
    assert isinstance(config, family), type(config)


# ---------------------------------------------------------------------------------------------------- LoRAs

def lora_for(unet_config, expect, clip_model, path, seed, what, rank=4):
    """A rank-`rank` LoRA in kohya's key layout for every attention projection of the UNet and the
    CLIP text encoder, from ComfyUI's own key map (comfy.lora.model_lora_keys_*)."""
    config = config_from_unet(unet_config, expect)
    config.set_inference_dtype(F16, None)
    with torch.device('meta'):
        model = config.get_model({}, device='meta')
    key_map = comfy.lora.model_lora_keys_unet(model, {})
    if clip_model is not None:
        key_map = comfy.lora.model_lora_keys_clip(clip_model, key_map)
    shapes = {**{k: v.shape for k, v in model.state_dict().items()}}
    if clip_model is not None:
        shapes.update({k: v.shape for k, v in clip_model.state_dict().items()})
    gen = torch.Generator().manual_seed(seed)
    sd = {}
    for lora_key, target in sorted(key_map.items()):
        if not (lora_key.startswith('lora_unet_') or lora_key.startswith('lora_te')):
            continue
        if not any(p in lora_key for p in ('_to_q', '_to_k', '_to_v', '_q_proj', '_k_proj', '_v_proj')):
            continue
        if lora_key.startswith('lora_unet_') and '_blocks_' not in lora_key:
            continue  # the kohya names of the diffusers layout (down_blocks_...), once per layer
        shape = shapes[target]
        if len(shape) != 2:
            continue
        out_f, in_f = shape
        sd[f'{lora_key}.lora_down.weight'] = (torch.randn(rank, in_f, generator=gen) / math.sqrt(in_f)).to(F16)
        sd[f'{lora_key}.lora_up.weight'] = (torch.randn(out_f, rank, generator=gen) * 0.01).to(F16)
        sd[f'{lora_key}.alpha'] = torch.tensor(float(rank), dtype=F16)
    save(sd, path, what)
    return key_map


def make_lora(path, family, seed):
    if family == 'sd15':
        clip = meta_clip(comfy.sd1_clip.SD1ClipModel)
        lora_for(SD15_UNET, 'SD15', clip, path, seed, 'SD1.5 LoRA, rank 4')
    else:
        clip = meta_clip(comfy.sdxl_clip.SDXLClipModel)
        lora_for(SDXL_VEGA_UNET, 'Segmind_Vega', clip, path, seed, 'SDXL LoRA, rank 4')


def meta_clip(cls):
    with torch.device('meta'):
        return cls(device='meta', dtype=F16)


def verify_lora(path, family):
    unet_config, expect, clip_cls = ((SD15_UNET, 'SD15', comfy.sd1_clip.SD1ClipModel) if family == 'sd15'
                                     else (SDXL_VEGA_UNET, 'Segmind_Vega', comfy.sdxl_clip.SDXLClipModel))
    config = config_from_unet(unet_config, expect)
    with torch.device('meta'):
        model = config.get_model({}, device='meta')
    key_map = comfy.lora.model_lora_keys_clip(meta_clip(clip_cls), comfy.lora.model_lora_keys_unet(model, {}))
    lora = comfy.utils.load_torch_file(path)
    with LoadLog() as log:
        patches = comfy.lora.load_lora(lora, key_map)
    print(f'  {len(patches)} layers patched ({sum(k.startswith("diffusion_model.") for k in patches)} UNet)')
    assert patches
    check_clean(log, path)


# ---------------------------------------------------------------------------------------------------- upscalers

def make_esrgan(path, scale):
    from spandrel import ModelLoader
    from spandrel.architectures.ESRGAN import ESRGAN
    torch.manual_seed(SEED)
    net = ESRGAN(in_nc=3, out_nc=3, num_filters=16, num_blocks=1, scale=scale)
    sd = {k: v.detach().contiguous() for k, v in net.state_dict().items()}
    save(sd, path, f'ESRGAN RRDBNet 16nf 1nb x{scale}', pth=path.endswith('.pth'))
    del ModelLoader


def verify_esrgan(path, scale):
    from spandrel import ModelLoader
    desc = ModelLoader().load_from_file(path)
    with torch.no_grad():
        y = desc.model(torch.rand(1, 3, 8, 8))
    print(f'  spandrel: {desc.architecture.name} x{desc.scale} {desc.tags}; 8x8 -> {tuple(y.shape[-2:])}')
    assert desc.architecture.name == 'ESRGAN' and desc.scale == scale



# ---------------------------------------------------------------------------------------------------- image adapters

def make_clip_vision_h(path):
    """CLIP ViT-H/14 vision tower (what IP-Adapter's CLIP-ViT-H-14-laion2B file holds), from ComfyUI's config."""
    config = os.path.join(os.path.dirname(comfy.clip_vision.__file__), 'clip_vision_config_h.json')
    clip = comfy.clip_vision.ClipVisionModel(config)
    torch_default_init(clip.model, SEED + 6)
    save(fp16(clip.get_sd()), path, 'CLIP ViT-H/14 vision tower')


def make_clip_vision_g(path):
    """CLIP ViT-bigG/14 vision tower (what IP-Adapter's CLIP-ViT-bigG-14-laion2B file holds: 48 layers of
    1664, 1.84 B parameters), from ComfyUI's config on the meta device, each tensor drawn as torch.nn
    draws it and written in fp16 one at a time (the fp32 model alone would take 7.4 GB here)."""
    config = os.path.join(os.path.dirname(comfy.clip_vision.__file__), 'clip_vision_config_g.json')
    import json
    with open(config) as f:
        config = json.load(f)
    with torch.device('meta'):
        model = comfy.clip_model.CLIPVisionModelProjection(config, torch.float32, 'meta', comfy.ops.manual_cast)

    def draw(owner, name, shape, gen):
        leaf = name.rsplit('.', 1)[-1]
        if isinstance(owner, (torch.nn.Linear, torch.nn.Conv2d)):
            fan_in = math.prod(owner.weight.shape[1:])
            bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) for weights, as torch.nn draws biases
            return torch.empty(shape).uniform_(-bound, bound, generator=gen)
        if isinstance(owner, torch.nn.Embedding):
            return torch.empty(shape).normal_(0, 1, generator=gen)
        if isinstance(owner, torch.nn.LayerNorm):
            return torch.ones(shape) if leaf == 'weight' else torch.zeros(shape)
        return torch.empty(shape).normal_(0, 0.02, generator=gen)  # the class embedding

    write_random(path, model, draw, F16, SEED + 17, 'CLIP ViT-bigG/14 vision tower')


def verify_clip_vision(path, layers):
    with LoadLog() as log:
        clip = comfy.clip_vision.load(path)
    n = len(clip.model.vision_model.encoder.layers)
    print(f'  clip vision: {type(clip.model).__name__}, {n} layers, image size {clip.image_size}')
    assert n == layers, n
    check_clean(log, path)


# The cross-attention widths of the UNet blocks IPAdapter_plus patches, in the order it numbers them
# (its ipadapter_execute: SD1.5 input 1,2,4,5,7,8, output 3..11, middle; SDXL at SDXL's own depth, 70).
IP_LAYERS_SD15 = [320, 320, 640, 640, 1280, 1280, 1280, 1280, 1280, 640, 640, 640, 320, 320, 320, 1280]
IP_LAYERS_SDXL = [640] * 4 + [1280] * 20 + [1280] * 30 + [640] * 6 + [1280] * 10


def ipadapter_pack():
    here = os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI_IPAdapter_plus')
    import importlib.util
    spec = importlib.util.spec_from_file_location('ipadapter_image_proj_models',
                                                  os.path.join(here, 'image_proj_models.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_ipadapter(path, kind):
    """An IP-Adapter laid out as the released files are (image_proj.*, ip_adapter.N.to_k_ip/to_v_ip),
    its image projection built from the IPAdapter_plus pack's own classes."""
    pack = ipadapter_pack()
    layers, cross = (IP_LAYERS_SD15, 768) if kind == 'sd15' else (IP_LAYERS_SDXL, 2048)
    torch.manual_seed(SEED + 7)
    if kind == 'sdxl-plus':
        proj = pack.Resampler(dim=1280, depth=4, dim_head=64, heads=20, num_queries=16, embedding_dim=1280,
                              output_dim=cross, ff_mult=4)
    else:
        proj = pack.ImageProjModel(cross_attention_dim=cross, clip_embeddings_dim=1280 if kind == 'sdxl-g' else 1024,
                                   clip_extra_context_tokens=4)
    torch_default_init(proj, SEED + 7)
    sd = {f'image_proj.{k}': v for k, v in proj.state_dict().items()}
    for n, width in enumerate(layers):
        for kv in ('to_k_ip', 'to_v_ip'):
            layer = torch.nn.Linear(cross, width, bias=False)
            sd[f'ip_adapter.{2 * n + 1}.{kv}.weight'] = layer.weight.detach()
    save(fp16(sd), path, f'IP-Adapter ({kind}) layout')


def verify_ipadapter(path, kind):
    import importlib
    sys.path.insert(0, os.path.join(os.getcwd(), 'custom_nodes'))
    utils = importlib.import_module('ComfyUI_IPAdapter_plus.utils')
    plus = importlib.import_module('ComfyUI_IPAdapter_plus.IPAdapterPlus')
    model = utils.ipadapter_model_loader(path)
    is_plus = 'latents' in model['image_proj']
    cross = model['ip_adapter']['1.to_k_ip.weight'].shape[1]
    is_sdxl = cross == 2048
    # the pack takes the image embedding's width from the CLIP vision model's output
    clip_dim = 1280 if is_plus else model['image_proj']['proj.weight'].shape[1]
    ip = plus.IPAdapter(model, cross_attention_dim=1280 if (is_plus and is_sdxl) else cross,
                        output_cross_attention_dim=cross, clip_embeddings_dim=clip_dim,
                        clip_extra_context_tokens=16 if is_plus else 4, is_sdxl=is_sdxl, is_plus=is_plus)
    print(f'  IPAdapter_plus loads it: sdxl={is_sdxl} plus={is_plus}, {len(ip.ip_layers.to_kvs)} k/v layers, '
          f'{type(ip.image_proj_model).__name__}')
    assert (kind == 'sd15') != is_sdxl and (kind == 'sdxl-plus') == is_plus
    assert is_plus or clip_dim == (1280 if kind == 'sdxl-g' else 1024), clip_dim


def make_photomaker(path):
    """PhotoMaker's ID encoder, ComfyUI's own PhotoMakerIDEncoder, saved as the released .bin is ({"id_encoder": ...})."""
    from comfy_extras.nodes_photomaker import PhotoMakerIDEncoder
    enc = PhotoMakerIDEncoder()
    torch_default_init(enc, SEED + 8)
    save({'id_encoder': fp16(enc.state_dict()), 'lora_weights': {}}, path, 'PhotoMaker v1 ID encoder', pth=True)


def verify_photomaker(path):
    """What PhotoMakerLoader does: a strict load_state_dict of the file's id_encoder."""
    from comfy_extras.nodes_photomaker import PhotoMakerIDEncoder
    enc = PhotoMakerIDEncoder()
    data = comfy.utils.load_torch_file(path, safe_load=True)
    enc.load_state_dict(data['id_encoder'] if 'id_encoder' in data else data)
    print(f'  PhotoMakerLoader: {type(enc).__name__}')


# ---------------------------------------------------------------------------------------------------- node packs' own models

def make_iclight(path):
    """IC-Light fc: an SD1.5 UNet with 8 input channels (picture latent + foreground latent), stored as the
    offsets kijai's LoadAndApplyICLightUnet adds to the checkpoint's weights (its ldm-key branch)."""
    # SD1.5's config with 8 input channels, as the loader patches it (detection alone would say
    # Stable_Zero123 or SD15_instructpix2pix, SD1.5's architecture with 8 input channels too)
    config = config_from_unet(SD15_UNET, 'SD15')
    config.unet_config['in_channels'] = 8
    config.set_inference_dtype(F16, None)
    model = config.get_model({}, device='cpu')
    torch_default_init(model.diffusion_model, SEED + 9)
    with torch.no_grad():
        sd = {k: (v * 0.05) for k, v in model.diffusion_model.state_dict().items()}
    save(fp16(sd), path, 'IC-Light fc offsets (SD1.5 UNet, 8 input channels)')


def verify_iclight(path):
    sd = comfy.utils.load_torch_file(path)
    config = comfy.model_detection.model_config_from_unet(sd, '')
    channels = sd['input_blocks.0.0.weight'].shape[1]
    print(f'  detected: {type(config).__name__}, {channels} input channels, {len(sd)} tensors')
    assert type(config).__name__ in ('SD15', 'Stable_Zero123', 'SD15_instructpix2pix') and channels == 8
    sd15 = config_from_unet(SD15_UNET, 'SD15')
    sd15.unet_config['in_channels'] = 8
    with torch.device('meta'):
        expected = {k: v.shape for k, v in sd15.get_model({}, device='meta').diffusion_model.state_dict().items()}
    assert {k: v.shape for k, v in sd.items()} == expected, 'keys or shapes differ from the SD1.5 UNet'


def aux_pack():
    src = os.path.join(os.getcwd(), 'custom_nodes', 'comfyui_controlnet_aux', 'src')
    if src not in sys.path:
        sys.path.insert(0, src)


def make_openpose(path):
    """OpenPose's body, hand and face networks (lllyasviel/Annotators), from comfyui_controlnet_aux's own
    classes, keyed as the released .pth files are (the pack's util.transfer drops the first key part)."""
    aux_pack()
    from custom_controlnet_aux.open_pose.face import FaceNet
    from custom_controlnet_aux.open_pose.model import bodypose_model, handpose_model
    folder = os.path.dirname(path)
    for name, net, strip in (('body_pose_model.pth', bodypose_model(), True),
                             ('hand_pose_model.pth', handpose_model(), True), ('facenet.pth', FaceNet(), False)):
        torch_default_init(net, SEED + 13)
        sd = {('.'.join(k.split('.')[1:]) if strip else k): v.contiguous() for k, v in net.state_dict().items()}
        save(sd, os.path.join(folder, name), f'OpenPose {name}', pth=True)


def verify_openpose(path):
    aux_pack()
    from custom_controlnet_aux.open_pose.body import Body
    from custom_controlnet_aux.open_pose.face import Face
    from custom_controlnet_aux.open_pose.hand import Hand
    folder = os.path.dirname(path)
    Body(os.path.join(folder, 'body_pose_model.pth'))
    Hand(os.path.join(folder, 'hand_pose_model.pth'))
    Face(os.path.join(folder, 'facenet.pth'))
    print('  controlnet_aux loads body, hand and face')


def make_dpt_hybrid(path):
    """Intel/dpt-hybrid-midas as transformers' DPT (ViT-hybrid with a BiT backbone) writes it, in the
    Hugging Face cache layout MidasDetector reads with local_files_only."""
    from transformers import DPTConfig, DPTForDepthEstimation, DPTImageProcessor
    snapshot = os.path.dirname(path)
    repo = os.path.dirname(os.path.dirname(snapshot))
    config = DPTConfig(is_hybrid=True, backbone_out_indices=[2, 5, 8, 11], neck_hidden_sizes=[256, 512, 768, 768],
                       reassemble_factors=[1, 1, 1, 0.5], backbone_featmap_shape=[1, 1024, 24, 24],
                       readout_type='project', embedding_type='vit_hybrid', image_size=384)
    torch.manual_seed(SEED + 14)
    model = DPTForDepthEstimation(config)
    model.save_pretrained(snapshot, safe_serialization=True)
    # the hybrid's position table is fixed at 384x384: its processor resizes to exactly that
    DPTImageProcessor(do_resize=True, size={'height': 384, 'width': 384}, keep_aspect_ratio=False,
                      ensure_multiple_of=1, do_normalize=True, image_mean=[0.5] * 3,
                      image_std=[0.5] * 3).save_pretrained(snapshot)
    os.makedirs(os.path.join(repo, 'refs'), exist_ok=True)
    with open(os.path.join(repo, 'refs', 'main'), 'w') as f:
        f.write(os.path.basename(snapshot))
    print(f'  saved {snapshot}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M params')


def verify_dpt_hybrid(path):
    from transformers import DPTForDepthEstimation, DPTImageProcessor
    DPTImageProcessor.from_pretrained('Intel/dpt-hybrid-midas', local_files_only=True)
    model = DPTForDepthEstimation.from_pretrained('Intel/dpt-hybrid-midas', local_files_only=True)
    print(f'  transformers loads Intel/dpt-hybrid-midas from the cache: {type(model).__name__}')


def sam2_pack():
    """kijai's ComfyUI-segment-anything-2, imported as a package (its folder name has dashes)."""
    import importlib.util
    here = os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI-segment-anything-2')
    if 'sam2pack' not in sys.modules:
        spec = importlib.util.spec_from_file_location('sam2pack', os.path.join(here, '__init__.py'),
                                                      submodule_search_locations=[here])
        module = importlib.util.module_from_spec(spec)
        sys.modules['sam2pack'] = module
        spec.loader.exec_module(module)
    import importlib
    return importlib.import_module('sam2pack.load_model'), os.path.join(here, 'sam2_configs', 'sam2.1_hiera_l.yaml')


def make_sam2(path):
    """SAM 2.1 Hiera-L, built by the pack's own load_model from its own config (the file it would fetch)."""
    lm, config = sam2_pack()
    captured = {}
    original = lm.SAM2Base.load_state_dict

    def capture(self, sd, *args, **kwargs):
        captured['model'] = self
    lm.SAM2Base.load_state_dict = capture
    real_load = lm.load_torch_file
    lm.load_torch_file = lambda _path: {}
    try:
        lm.load_model(path, config, 'single_image', torch.float32, torch.device('cpu'))
    finally:
        lm.SAM2Base.load_state_dict = original
        lm.load_torch_file = real_load
    model = captured['model']
    torch_default_init(model, SEED + 15)
    sd = {k: v.contiguous() for k, v in model.state_dict().items()}
    save(sd, path, 'SAM 2.1 Hiera-L')


def verify_sam2(path):
    lm, config = sam2_pack()
    predictor = lm.load_model(path, config, 'single_image', torch.float32, torch.device('cpu'))
    print(f'  the pack loads it: {type(predictor).__name__}')


def rmbg_lama_node():
    """ComfyUI-RMBG's AILab_LamaRemover module (the node `remove` uses), imported from its file."""
    import importlib.util
    name = 'rmbg_lama_remover'
    if name not in sys.modules:
        path = os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI-RMBG', 'py', 'AILab_LamaRemover.py')
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def make_big_lama(path):
    """big-lama as the file ComfyUI-RMBG loads: a TorchScript module traced from forward(image, mask)
    (image in [0, 1], mask 1 where to fill), as lama-cleaner's big-lama.pt is. The network is
    spandrel's own LaMa (FFC ResNet generator, 18 blocks, the released size)."""
    from spandrel.architectures.LaMa import LaMa
    model = LaMa(in_nc=4, out_nc=3)
    torch_default_init(model, SEED + 16)
    model.eval()
    image = torch.rand(1, 3, 64, 96)
    mask = (torch.rand(1, 1, 64, 96) > 0.5).float()
    with torch.no_grad():
        traced = torch.jit.trace(model, (image, mask), check_trace=False)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    torch.jit.save(traced, tmp, _extra_files={'imagegen_real_comfyui': NOTE.format(seed=SEED, what='big-lama')})
    os.replace(tmp, path)
    n = sum(p.numel() for p in model.parameters())
    print(f'  saved {path}: {n / 1e6:.1f} M params, {os.path.getsize(path) / 2**20:.1f} MiB')


def verify_big_lama(path):
    """Loaded and run by the node itself, at a size other than the traced one; spandrel also
    recognises the traced module's state dict as LaMa."""
    import spandrel
    lama = rmbg_lama_node()
    node = lama.AILab_LamaRemover()
    node.model_path = path
    images = torch.rand(1, 192, 128, 3)
    masks = torch.zeros(1, 192, 128)
    masks[:, 60:120, 40:90] = 1
    (out,) = node.remove_object(images, masks, 127, 0)
    if tuple(out.shape) != (1, 192, 128, 3):
        raise SystemExit(f'AILab_LamaRemover answered {tuple(out.shape)}')
    # outside the mask the picture comes back as it went in (up to two 8-bit roundings)
    if (out[0, :60] - images[0, :60]).abs().max() > 2 / 255 + 1e-6:
        raise SystemExit('AILab_LamaRemover changed pixels outside the mask')
    sd = torch.jit.load(path, map_location='cpu').state_dict()
    descriptor = spandrel.ModelLoader('cpu').load_from_state_dict(sd)
    if descriptor.architecture.id != 'LaMa':
        raise SystemExit(f'spandrel detects {descriptor.architecture.id}')
    print(f'  AILab_LamaRemover runs it: {tuple(out.shape)}; spandrel detects {descriptor.architecture.id}')


def florence2_pack():
    """ComfyUI-Florence2's configuration and modeling modules, the ones its loader uses (its folder
    name has a dash, and its __init__ would load every node: a bare package holding only them)."""
    import importlib
    import types
    here = os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI-Florence2')
    if 'florence2pack' not in sys.modules:
        package = types.ModuleType('florence2pack')
        package.__path__ = [here]
        sys.modules['florence2pack'] = package
    return (importlib.import_module('florence2pack.configuration_florence2'),
            importlib.import_module('florence2pack.modeling_florence2'))


# A short English text the random tokenizer's merges are learnt from: the task prompts Florence-2's
# processor writes and caption-like sentences (no tokenizer can be downloaded here).
FLORENCE2_CORPUS = [
    'What does the image describe?', 'Describe in detail what is shown in the image.',
    'Describe with a paragraph what is shown in the image.', 'What is the text in the image?',
    'Locate the objects with category name in the image.', 'Locate the region proposals in the image.',
    'The image shows a red fox standing in the snow in front of a forest of tall trees.',
    'A lighthouse stands on a rocky shore at dawn, with waves breaking against the rocks below.',
    'In the foreground there is a person wearing a blue shirt, and behind them a white wall.',
    'The picture is a close-up photograph of a cup of coffee on a wooden table near a window.',
]


def make_florence2(path):
    """Florence-2-large's layout at reduced width and depth (DaViT stages 1,1,1,1 with dims 32-256
    instead of 1,1,9,1 with 256-2048; BART of d_model 256 with 1 encoder and 1 decoder layer instead
    of 1024 and 12 + 12; the real 768x768 input, so 577 image tokens), built by the pack's own
    Florence2ForConditionalGeneration. Beside it the processor transformers' AutoProcessor reads: a
    byte-level BPE tokenizer (BART's special tokens) learnt here from a few sentences, and a CLIP
    image processor as the released one (768x768, ImageNet mean/std)."""
    import tempfile
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartTokenizerFast, CLIPImageProcessor
    from transformers.models.florence2 import Florence2Processor
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(FLORENCE2_CORPUS, vocab_size=512, min_frequency=1, show_progress=False,
                            special_tokens=['<s>', '<pad>', '</s>', '<unk>', '<mask>'])
    with tempfile.TemporaryDirectory() as tmp:
        bpe.save_model(tmp)
        tokenizer = BartTokenizerFast(vocab_file=os.path.join(tmp, 'vocab.json'),
                                      merges_file=os.path.join(tmp, 'merges.txt'),
                                      extra_special_tokens={'image_token': '<image>'}, model_max_length=1024)
    tokenizer.add_special_tokens({'additional_special_tokens': ['<image>']})
    # image_seq_length 0: transformers' own Florence2Processor then writes the prompt as Microsoft's
    # remote processor does (<s> prompt </s>, no image placeholders), which the pack's model expects:
    # it puts the 577 image features in front of the prompt itself.
    images = CLIPImageProcessor(do_resize=True, size={'height': 768, 'width': 768}, resample=3,
                                do_center_crop=False, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                                image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225],
                                do_convert_rgb=False, image_seq_length=0)
    # the answer parsers by task type, as Florence-2's released processor configures them
    parsers = {'ocr': {'PATTERN': r'(.+?)<loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)>'
                                  r'<loc_(\d+)><loc_(\d+)>', 'AREA_THRESHOLD': 0.0},
               'phrase_grounding': {'FILTER_BY_BLACK_LIST': True}, 'pure_text': {}, 'description_with_bboxes': {},
               'description_with_polygons': {}, 'polygons': {}, 'bboxes': {}, 'description_with_bboxes_or_polygons': {}}
    Florence2Processor(image_processor=images, tokenizer=tokenizer,
                       post_processor_config=parsers).save_pretrained(folder)
    configuration, modeling = florence2_pack()
    d_model = 256
    vision = {'model_type': 'davit', 'drop_path_rate': 0.1, 'patch_size': [7, 3, 3, 3],
              'patch_stride': [4, 2, 2, 2], 'patch_padding': [3, 1, 1, 1],
              'patch_prenorm': [False, True, True, True], 'enable_checkpoint': False,
              'dim_embed': [32, 64, 128, 256], 'num_heads': [1, 2, 4, 8], 'num_groups': [1, 2, 4, 8],
              'depths': [1, 1, 1, 1], 'window_size': 12, 'projection_dim': d_model,
              'visual_temporal_embedding': {'type': 'COSINE', 'max_temporal_embeddings': 100},
              'image_pos_embed': {'type': 'learned_abs_2d', 'max_pos_embeddings': 50},
              'image_feature_source': ['spatial_avg_pool', 'temporal_avg_pool']}
    config = configuration.Florence2Config(
        vision_config=vision,
        text_config={'vocab_size': len(tokenizer), 'd_model': d_model, 'encoder_layers': 1, 'decoder_layers': 1,
                     'encoder_attention_heads': 4, 'decoder_attention_heads': 4, 'encoder_ffn_dim': 4 * d_model,
                     'decoder_ffn_dim': 4 * d_model, 'max_position_embeddings': 1024, 'bos_token_id': 0,
                     'pad_token_id': 1, 'eos_token_id': 2, 'decoder_start_token_id': 2, 'forced_bos_token_id': 0,
                     'forced_eos_token_id': 2, 'no_repeat_ngram_size': 3, 'num_beams': 3},
        vocab_size=len(tokenizer), projection_dim=d_model, bos_token_id=0, pad_token_id=1, eos_token_id=2,
        is_encoder_decoder=True, architectures=['Florence2ForConditionalGeneration'])
    torch.manual_seed(SEED + 17)
    model = modeling.Florence2ForConditionalGeneration(config)
    torch_default_init(model, SEED + 17)
    model.save_pretrained(folder, safe_serialization=True)
    # the vision config is a plain PretrainedConfig, whose to_dict() drops its model_type ('davit'),
    # which the model's constructor asserts: written as the released config.json has it
    import json
    with open(os.path.join(folder, 'config.json')) as f:
        written = json.load(f)
    written['vision_config'] = vision
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(written, f, indent=2)
    n = sum(p.numel() for p in model.parameters())
    print(f'  saved {folder}: {n / 1e6:.1f} M params, vocabulary {len(tokenizer)}')


def verify_florence2(path):
    """Loaded as the node loads it (the pack's class, AutoProcessor with trust_remote_code) and run as
    Florence2Run runs `more_detailed_caption`, on a short token budget."""
    from PIL import Image
    from transformers import AutoProcessor
    _, modeling = florence2_pack()
    folder = os.path.dirname(path)
    model = modeling.Florence2ForConditionalGeneration.from_pretrained(folder, attn_implementation='sdpa',
                                                                       dtype=torch.float32)
    processor = AutoProcessor.from_pretrained(folder, trust_remote_code=True)
    picture = Image.fromarray((torch.rand(192, 128, 3) * 255).to(torch.uint8).numpy())
    inputs = processor(text='<MORE_DETAILED_CAPTION>', images=picture, return_tensors='pt', do_rescale=False)
    ids = model.generate(input_ids=inputs['input_ids'], pixel_values=inputs['pixel_values'], max_new_tokens=16,
                         do_sample=False, num_beams=3, use_cache=False)
    text = processor.batch_decode(ids, skip_special_tokens=False)[0]
    parsed = processor.post_process_generation(text, task='<MORE_DETAILED_CAPTION>', image_size=picture.size)
    if not isinstance(parsed.get('<MORE_DETAILED_CAPTION>'), str):
        raise SystemExit(f'post_process_generation answered {parsed!r}')
    print(f'  {type(processor).__name__} + the pack\'s {type(model).__name__}: '
          f'prompt {inputs["input_ids"].shape[1]} tokens, pixels {tuple(inputs["pixel_values"].shape)}, '
          f'{ids.shape[1]} tokens out: {text[:60]!r}')


# ---------------------------------------------------------------------------------------------------- the list

def hf_cache():
    from huggingface_hub import constants
    return constants.HF_HUB_CACHE


def M(name, paths, make, verify, note=''):
    return {'name': name, 'paths': paths, 'make': make, 'verify': verify, 'note': note}


def models():
    SD15_CN_PREFIX = 'control_model.'
    return [
        M('sd15', ['checkpoints/random-sd15.safetensors'], make_sd15,
          lambda p: verify_checkpoint(p, comfy.supported_models.SD15)),
        M('sdxl', ['checkpoints/random-sdxl.safetensors'], make_sdxl,
          lambda p: verify_checkpoint(p, comfy.supported_models.SDXL)),
        M('esrgan-x2', ['upscale_models/RealESRGAN_x2plus.pth'], lambda p: make_esrgan(p, 2),
          lambda p: verify_esrgan(p, 2)),
        M('esrgan-x4', ['upscale_models/RealESRGAN_x4plus.pth'], lambda p: make_esrgan(p, 4),
          lambda p: verify_esrgan(p, 4)),
        M('lora-sd15', ['loras/detail-tweaker.safetensors'], lambda p: make_lora(p, 'sd15', SEED + 10),
          lambda p: verify_lora(p, 'sd15')),
        M('lora-sd15-faceid', ['loras/ip-adapter-faceid-plusv2_sd15_lora.safetensors'],
          lambda p: make_lora(p, 'sd15', SEED + 11), lambda p: verify_lora(p, 'sd15')),
        M('lora-sdxl', ['loras/random-lora-sdxl.safetensors'], lambda p: make_lora(p, 'sdxl', SEED + 12),
          lambda p: verify_lora(p, 'sdxl')),
        M('controlnet-sd15', ['controlnet/control_v11p_sd15_canny.pth', 'controlnet/control_v11f1p_sd15_depth.pth',
                              'controlnet/control_v11p_sd15_openpose.pth'],
          lambda p: make_controlnet(p, SD15_UNET, 'SD15', SD15_CN_PREFIX, 'SD1.5 ControlNet'),
          lambda p: verify_controlnet(p, comfy.supported_models.SD15)),
        M('controlnet-sdxl', ['controlnet/controlnet-canny-sdxl-1.0.safetensors',
                              'controlnet/controlnet-depth-sdxl-1.0.safetensors',
                              'controlnet/OpenPoseXL2.safetensors', 'controlnet/instantid-controlnet.safetensors'],
          lambda p: make_controlnet(p, SDXL_VEGA_UNET, 'Segmind_Vega', '', 'SDXL ControlNet at Segmind-Vega depth'),
          lambda p: verify_controlnet(p, comfy.supported_models.SDXL)),
        M('clip-l', ['text_encoders/clip_l.safetensors'], make_clip_l,
          lambda p: verify_text_encoders([p], comfy.sd.CLIPType.STABLE_DIFFUSION, 'SD1ClipModel')),
        M('clip-g', ['text_encoders/clip_g.safetensors'], make_clip_g,
          lambda p: verify_text_encoders([p], comfy.sd.CLIPType.STABLE_DIFFUSION, 'SDXLRefinerClipModel')),
        M('t5xxl', ['text_encoders/t5xxl_fp16.safetensors'], make_t5xxl,
          lambda p: verify_text_encoders([os.path.join(os.path.dirname(p), 'clip_l.safetensors'), p],
                                         comfy.sd.CLIPType.FLUX, 'FluxClipModel')),
        M('flux-vae', ['vae/ae.safetensors'], make_flux_vae, lambda p: verify_vae(p, 16)),
        M('flux-schnell', ['diffusion_models/random-flux-schnell.safetensors'], lambda p: make_flux(p, False),
          lambda p: verify_diffusion_model(p, 'FluxSchnell')),
        M('flux-dev', ['diffusion_models/random-flux-dev.safetensors'], lambda p: make_flux(p, True),
          lambda p: verify_diffusion_model(p, 'Flux')),
        M('sd3', ['checkpoints/random-sd3.safetensors'],
          lambda p: make_sd3(p, 4, False, 'SD3 MMDiT, depth 4'),
          lambda p: verify_checkpoint(p, comfy.supported_models.SD3, clip=False)),
        M('sd3.5', ['checkpoints/random-sd3.5.safetensors'],
          lambda p: make_sd3(p, 6, True, 'SD3.5 MMDiT (RMS q/k norm), depth 6'),
          lambda p: verify_checkpoint(p, comfy.supported_models.SD3, clip=False)),
        M('clip-vision-h', ['clip_vision/CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors'], make_clip_vision_h,
          lambda p: verify_clip_vision(p, 32)),
        M('clip-vision-g', ['clip_vision/CLIP-ViT-bigG-14-laion2B-39B-b160k.safetensors'], make_clip_vision_g,
          lambda p: verify_clip_vision(p, 48)),
        M('ipadapter-sd15', ['ipadapter/ip-adapter_sd15.safetensors'], lambda p: make_ipadapter(p, 'sd15'),
          lambda p: verify_ipadapter(p, 'sd15')),
        M('ipadapter-sdxl-vit-h', ['ipadapter/ip-adapter_sdxl_vit-h.safetensors'], lambda p: make_ipadapter(p, 'sdxl'),
          lambda p: verify_ipadapter(p, 'sdxl')),
        M('ipadapter-sdxl', ['ipadapter/ip-adapter_sdxl.safetensors'], lambda p: make_ipadapter(p, 'sdxl-g'),
          lambda p: verify_ipadapter(p, 'sdxl-g')),
        M('ipadapter-plus-face-sdxl', ['ipadapter/ip-adapter-plus-face_sdxl_vit-h.safetensors',
                                       'ipadapter/ip-adapter-plus_sdxl_vit-h.safetensors'],
          lambda p: make_ipadapter(p, 'sdxl-plus'), lambda p: verify_ipadapter(p, 'sdxl-plus')),
        M('photomaker', ['photomaker/photomaker-v1.bin'], make_photomaker, verify_photomaker),
        M('iclight', ['unet/iclight_sd15_fc.safetensors'], make_iclight, verify_iclight),
        # outside models/ (absolute paths): where the packs look before they download on first use
        M('openpose', [os.path.join(os.getcwd(), 'custom_nodes/comfyui_controlnet_aux/ckpts/lllyasviel/Annotators/body_pose_model.pth')],
          make_openpose, verify_openpose),
        M('dpt-hybrid', [hf_cache() + '/models--Intel--dpt-hybrid-midas/snapshots/' + SNAPSHOT + '/model.safetensors'],
          make_dpt_hybrid, verify_dpt_hybrid),
        M('sam2', ['sam2/sam2.1_hiera_large.safetensors'], make_sam2, verify_sam2),
        M('big-lama', ['RMBG/Lama/big-lama.pt'], make_big_lama, verify_big_lama),
        M('florence2', ['LLM/Florence-2-large/model.safetensors'], make_florence2, verify_florence2),
    ]


def main(items=None, doc=__doc__):
    """Makes and verifies `items` (default: this file's models); make_rmbg_models.py runs its own through it."""
    parser = argparse.ArgumentParser(description=doc.split('\n')[0])
    parser.add_argument('models_dir')
    parser.add_argument('--only', default='', help='comma-separated names (see --list)')
    parser.add_argument('--force', action='store_true', help='make a file again although it exists')
    parser.add_argument('--verify', action='store_true', help='verify the files that exist too')
    parser.add_argument('--list', action='store_true')
    opts = parser.parse_args()
    items = items or models()
    if opts.list:
        for item in items:
            print(f"{item['name']:18} {' '.join(item['paths'])}")
        return
    only = [n for n in opts.only.split(',') if n]
    unknown = [n for n in only if n not in {i['name'] for i in items}]
    if unknown:
        raise SystemExit(f'unknown model(s) {unknown}; --list names them')
    failed = []
    for item in items:
        if only and item['name'] not in only:
            continue
        paths = [os.path.join(opts.models_dir, p) for p in item['paths']]
        first = paths[0]
        t0 = time.time()
        try:
            made = False
            if opts.force or not os.path.exists(first):
                print(f"[{item['name']}] making {first}", flush=True)
                item['make'](first)
                made = True
            for other in paths[1:]:
                if made or not os.path.exists(other):
                    if os.path.exists(other):
                        os.remove(other)
                    os.link(first, other)
                    print(f'  {other}: a hard link to it')
            if made or opts.verify:
                print(f"[{item['name']}] verifying", flush=True)
                item['verify'](first)
                print(f"[{item['name']}] ok in {time.time() - t0:.0f}s", flush=True)
            else:
                print(f"[{item['name']}] present: {first}", flush=True)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - report and go on with the others
            logging.exception('failed')
            print(f"[{item['name']}] FAILED: {error}", flush=True)
            failed.append(item['name'])
    if failed:
        raise SystemExit(f'failed: {failed}')


if __name__ == '__main__':
    main()
