"""Random-weight models of ComfyUI-RMBG's own loaders: RMBG-2.0 (BiRefNet) and the clothes SegFormer.

Run with the ComfyUI directory as the working directory and the Python that runs that ComfyUI,
after setup.sh has put BiRefNet's sources (its GitHub repository's `config.py`, `dataset.py` and
`models/`, at the commit setup.sh pins) in BIREFNET_SRC (default: `birefnet-src` beside this file):

    python3 make_rmbg_models.py MODELS_DIR [--only NAME,...] [--force] [--verify] [--list]

RMBG-2.0 is BiRefNet (Swin-L backbone) as Hugging Face remote code: its folder holds `birefnet.py`
(the whole network in one file, a transformers PreTrainedModel), `BiRefNet_config.py` (its
PretrainedConfig), `config.json` and `model.safetensors`. ComfyUI-RMBG does not import them as a
package: it executes `BiRefNet_config.py`, then `birefnet.py` with its relative import rewritten,
builds the PreTrainedModel subclass it finds from a default config and loads the weights strictly.
`birefnet.py` is assembled here from the repository's modules, in dependency order, with the
imports between them removed and the network's class made a PreTrainedModel, as the released
single file is. The network is built at its released size (Swin-L, depths 2,2,18,2) by that code.

The clothes parser is transformers' SegformerForSemanticSegmentation with segformer_b2_clothes's
configuration (MiT-b2, 18 clothes labels) and its image processor configuration.

Each model is verified by the pack's own node code (RMBG's loader and `process_image`; the
`ClothesSegment` node), with Hugging Face offline. A model that exists is left alone unless --force.
"""
import importlib.util
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402 - ComfyUI on CPU, the list's runner

SEED = make_models.SEED
NOTE = make_models.NOTE
PACK = os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI-RMBG', 'py')
BIREFNET_SRC = os.environ.get('BIREFNET_SRC', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'birefnet-src'))

# BiRefNet's modules in the order one file needs them (each uses only what comes before it). The
# PVT backbones and the refiners are left out: RMBG-2.0 uses neither (Swin-L, `refine` off), and in
# one namespace pvt_v2's `Mlp` and the refiner's `Decoder` would replace Swin's and the network's own.
BIREFNET_MODULES = [
    'config.py',
    'models/backbones/swin_v1.py',
    'models/backbones/build_backbone.py',
    'models/modules/deform_conv.py',
    'models/modules/aspp.py',
    'models/modules/decoder_blocks.py',
    'models/modules/lateral_blocks.py',
    'models/birefnet.py',
]

BIREFNET_CONFIG_PY = '''from transformers import PretrainedConfig


class BiRefNetConfig(PretrainedConfig):
    model_type = "SegformerForSemanticSegmentation"

    def __init__(self, bb_pretrained=False, **kwargs):
        self.bb_pretrained = bb_pretrained
        super().__init__(**kwargs)
'''

# The network's class as the single file declares it: a PreTrainedModel whose default config does
# not load the backbone's ImageNet weights (ComfyUI-RMBG calls it with one positional config).
BIREFNET_CLASS = '''class BiRefNet(PreTrainedModel):
    config_class = BiRefNetConfig

    def __init__(self, bb_pretrained=True, config=BiRefNetConfig()):
        super(BiRefNet, self).__init__(config)
        bb_pretrained = config.bb_pretrained
'''

RMBG_CONFIG_JSON = {
    'architectures': ['BiRefNet'],
    'auto_map': {
        'AutoConfig': 'BiRefNet_config.BiRefNetConfig',
        'AutoModelForImageSegmentation': 'birefnet.BiRefNet',
    },
    'bb_pretrained': False,
    'model_type': 'SegformerForSemanticSegmentation',
    'torch_dtype': 'float32',
}


def birefnet_single_file(src):
    """BiRefNet's modules as one file: imports of its own modules (`config`, `dataset`, `models.*`)
    dropped, `class_labels_TR_sorted` taken from dataset.py, the network's class a PreTrainedModel."""
    commit_file = os.path.join(src, 'COMMIT')
    commit = open(commit_file).read().strip() if os.path.exists(commit_file) else 'unknown'
    parts = [f'# BiRefNet (github.com/ZhengPeng7/BiRefNet at {commit}) as one file, assembled by make_rmbg_models.py\n',
             'from transformers import PreTrainedModel\n', 'from .BiRefNet_config import BiRefNetConfig\n']
    with open(os.path.join(src, 'dataset.py')) as f:
        dataset = f.read()
    start = dataset.index('_class_labels_TR_sorted = (')
    end = dataset.index('\n', dataset.index('class_labels_TR_sorted = _class_labels_TR_sorted'))
    parts.append(dataset[start:end + 1])
    for name in BIREFNET_MODULES:
        with open(os.path.join(src, name)) as f:
            text = f.read()
        lines = [line for line in text.splitlines(keepends=True)
                 if not line.lstrip().startswith(('from config import', 'from dataset import', 'from models.'))]
        text = ''.join(lines)
        if name == 'config.py':
            text = text[:text.index("\n# Return task for choosing settings")] + '\n'
        if name == 'models/birefnet.py':
            head = text.index('class BiRefNet(')
            body = text.index('        self.config = Config()', head)
            text = text[:head] + BIREFNET_CLASS + text[body:]
        parts.append(f'\n\n# ---- {name}\n' + text)
    return ''.join(parts)


def pack_module(file, name):
    """One of ComfyUI-RMBG's node modules, imported from its file as ComfyUI does (py/ on sys.path)."""
    if name not in sys.modules:
        if PACK not in sys.path:
            sys.path.insert(0, PACK)
        spec = importlib.util.spec_from_file_location(name, os.path.join(PACK, file))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def make_rmbg(path):
    """model.safetensors and the code beside it; the weights from the assembled code's own initialisers."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'birefnet.py'), 'w') as f:
        f.write(birefnet_single_file(BIREFNET_SRC))
    with open(os.path.join(folder, 'BiRefNet_config.py'), 'w') as f:
        f.write(BIREFNET_CONFIG_PY)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(RMBG_CONFIG_JSON, f, indent=2)
    # Built by the same route the pack takes, so the file holds exactly what it will load.
    spec = importlib.util.spec_from_file_location('BiRefNetConfig', os.path.join(folder, 'BiRefNet_config.py'))
    config_module = importlib.util.module_from_spec(spec)
    sys.modules['BiRefNetConfig'] = config_module
    spec.loader.exec_module(config_module)
    import types
    module = types.ModuleType('imagegen_birefnet')
    with open(os.path.join(folder, 'birefnet.py')) as f:
        source = f.read().replace('from .BiRefNet_config import BiRefNetConfig', 'from BiRefNetConfig import BiRefNetConfig')
    exec(compile(source, os.path.join(folder, 'birefnet.py'), 'exec'), module.__dict__)
    torch.manual_seed(SEED + 40)
    model = module.BiRefNet(config_module.BiRefNetConfig())
    print(f'  BiRefNet: backbone {model.config.bb}, {type(model.bb).__name__} depths '
          f'{[len(layer.blocks) for layer in model.bb.layers]}')
    make_models.save(model.state_dict(), path, 'RMBG-2.0 (BiRefNet, Swin-L), fp32 as released')


def verify_rmbg(path):
    """ComfyUI-RMBG's RMBG node on a picture: its loader executes the folder's code (not the
    fallback through transformers' Auto classes) and the mask comes back at the picture's size."""
    rmbg = pack_module('AILab_RMBG.py', 'AILab_RMBG')
    folder = os.path.dirname(path)
    assert os.path.normpath(os.path.join(rmbg.folder_paths.models_dir, 'RMBG', 'RMBG-2.0')) == os.path.normpath(folder), \
        'the pack reads another models folder'
    node = rmbg.RMBG()
    loader = node.models['RMBG-2.0']
    ok, message = loader.check_model_cache('RMBG-2.0')
    assert ok, message
    loader.load_model('RMBG-2.0')
    cls = type(loader.model)
    assert cls.__module__.startswith('custom_birefnet_model_'), f'loaded by the fallback: {cls.__module__}'
    defaults = {k: v[1]['default'] for k, v in node.INPUT_TYPES()['optional'].items()
                if len(v) > 1 and 'default' in v[1]}
    defaults['process_res'] = 256  # the node's default (1024) takes minutes on this CPU; any size runs the same code
    image = torch.rand(1, 120, 160, 3)
    t0 = time.time()
    out_image, mask, _ = node.process_image(image, 'RMBG-2.0', **defaults)
    print(f'  RMBG node: {cls.__name__} from the folder\'s code, mask {tuple(mask.shape)} in {time.time() - t0:.0f}s, '
          f'range {float(mask.min()):.2f}..{float(mask.max()):.2f}')
    assert tuple(mask.shape) == (1, 120, 160), tuple(mask.shape)
    assert torch.isfinite(mask).all()


# segformer_b2_clothes (mattmdjaga/segformer_b2_clothes, which ComfyUI-RMBG's 1038lab/segformer_clothes copies).
CLOTHES_LABELS = ['Background', 'Hat', 'Hair', 'Sunglasses', 'Upper-clothes', 'Skirt', 'Pants', 'Dress', 'Belt',
                  'Left-shoe', 'Right-shoe', 'Face', 'Left-leg', 'Right-leg', 'Left-arm', 'Right-arm', 'Bag', 'Scarf']
SEGFORMER_B2 = {
    'num_channels': 3, 'num_encoder_blocks': 4, 'depths': [3, 4, 6, 3], 'sr_ratios': [8, 4, 2, 1],
    'hidden_sizes': [64, 128, 320, 512], 'patch_sizes': [7, 3, 3, 3], 'strides': [4, 2, 2, 2],
    'num_attention_heads': [1, 2, 5, 8], 'mlp_ratios': [4, 4, 4, 4], 'hidden_act': 'gelu',
    'hidden_dropout_prob': 0.0, 'attention_probs_dropout_prob': 0.0, 'classifier_dropout_prob': 0.1,
    'initializer_range': 0.02, 'drop_path_rate': 0.1, 'layer_norm_eps': 1e-6, 'decoder_hidden_size': 768,
    'semantic_loss_ignore_index': 255, 'reshape_last_stage': True,
}
SEGFORMER_PROCESSOR = {
    'do_normalize': True, 'do_resize': True, 'do_rescale': True, 'rescale_factor': 1 / 255,
    'image_mean': [0.485, 0.456, 0.406], 'image_std': [0.229, 0.224, 0.225], 'resample': 2,
    'size': {'height': 512, 'width': 512}, 'do_reduce_labels': False,
}


def make_clothes_segformer(path):
    from transformers import SegformerConfig, SegformerForSemanticSegmentation, SegformerImageProcessor
    folder = os.path.dirname(path)
    config = SegformerConfig(**SEGFORMER_B2, id2label=dict(enumerate(CLOTHES_LABELS)),
                             label2id={name: i for i, name in enumerate(CLOTHES_LABELS)},
                             architectures=['SegformerForSemanticSegmentation'])
    torch.manual_seed(SEED + 41)
    model = SegformerForSemanticSegmentation(config)
    model.save_pretrained(folder, safe_serialization=True)
    SegformerImageProcessor(**SEGFORMER_PROCESSOR).save_pretrained(folder)
    n = sum(p.numel() for p in model.parameters())
    print(f'  saved {folder}: SegFormer MiT-b2, {n / 1e6:.1f} M params, {os.path.getsize(path) / 2**20:.1f} MiB')


def verify_clothes_segformer(path):
    """ComfyUI-RMBG's ClothesSegment node on a picture, with the outfit classes the compilers ask for."""
    cloth = pack_module('AILab_ClothSegment.py', 'AILab_ClothSegment')
    node = cloth.ClothesSegment()
    assert os.path.normpath(node.cache_dir) == os.path.normpath(os.path.dirname(path)), node.cache_dir
    ok, message = node.check_model_cache()
    assert ok, message
    image = torch.rand(1, 120, 160, 3)
    outfit = {k: True for k in ('Hat', 'Upper-clothes', 'Skirt', 'Dress', 'Belt', 'Pants', 'Bag', 'Scarf',
                                'Left-shoe', 'Right-shoe')}
    _, mask, _ = node.segment_clothes(image, process_res=256, **outfit)
    from transformers import AutoModelForSemanticSegmentation
    model = AutoModelForSemanticSegmentation.from_pretrained(node.cache_dir)  # what the node loads
    labels = model.config.id2label
    print(f'  ClothesSegment: {type(model).__name__}, {len(labels)} labels, mask {tuple(mask.shape)}')
    assert len(labels) == 18 and tuple(mask.shape) == (1, 120, 160), tuple(mask.shape)


def models():
    return [
        make_models.M('rmbg', ['RMBG/RMBG-2.0/model.safetensors'], make_rmbg, verify_rmbg),
        make_models.M('clothes-segformer', ['RMBG/segformer_clothes/model.safetensors'], make_clothes_segformer,
                      verify_clothes_segformer),
    ]


if __name__ == '__main__':
    make_models.main(models(), __doc__)
