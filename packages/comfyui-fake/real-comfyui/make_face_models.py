"""Random-weight face models: insightface's ONNX packs and the face packs' adapters.

Run with the ComfyUI directory as the working directory and the Python that runs that ComfyUI,
after install-insightface.sh:

    python3 make_face_models.py MODELS_DIR [--only NAME,...] [--force] [--verify] [--list]

insightface picks a model's class from its ONNX graph alone (`model_zoo.ModelRouter`: five or more
outputs make a detector, a 192x192 input a landmark model, 96x96 gender/age, two 128x128 inputs
the swapper, a square input of 112 or more a recogniser), so each graph here has exactly the
inputs, outputs and shapes of the released one and small deterministic arithmetic inside (written
op by op with `onnx.helper`):

  * the detector (SCRFD-10G layout: 9 outputs, scores / boxes / 5 keypoints at strides 8, 16, 32,
    two anchors per place) FINDS ONE FACE in any picture: the first anchor of stride 32 scores 0.9,
    every other 0, and the boxes and keypoints are fractions of the input's size (the face takes
    30 % of the width, left of and above the centre, where a letterboxed picture always has
    content), so every pack gets a face, its keypoints and an aligned crop;
  * the recogniser, landmark and gender/age models average-pool the picture to 8x8 and project it
    with fixed random weights: different faces give different embeddings;
  * the swapper blends the target with a colour drawn from the source embedding, and carries the
    512x512 `emap` initializer insightface reads from the graph.

PuLID's facexlib RetinaFace (PyTorch) finds a face by the same kind of construction (see
make_pulid); ReActor's restorer's RetinaFace finds none (see make_reactor_restore).

Each file is loaded back by insightface itself (`FaceAnalysis` on the pack's folder: every model
routed to the expected task, one face found on a drawn picture; `model_zoo.get_model` on the
swapper and a swap run) and the adapters by the packs' own loader code. A file that exists is left
alone unless --force.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())

SEED = 1234
NOTE = 'random weights (seed {seed}); {what}; NOT a trained model'
OPSET = 13

# insightface's ArcFace alignment template (utils/face_align.py), in a 112x112 crop.
ARCFACE_KPS = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366],
                        [41.5493, 92.3655], [70.7299, 92.2041]], dtype=np.float32)
# The face the detector reports, as fractions of the input's width and height.
FACE_X1, FACE_Y1, FACE_SIZE = 0.2, 0.12, 0.3


def onnx_mod():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    return onnx, TensorProto, helper, numpy_helper


def save_onnx(graph, path, what):
    onnx, _, helper, _ = onnx_mod()
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)],
                              producer_name='imagegen make_face_models.py')
    model.ir_version = 8
    helper.set_model_props(model, {'note': NOTE.format(seed=SEED, what=what)})
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path + '.tmp')
    os.replace(path + '.tmp', path)


def const(name, array):
    _, _, _, numpy_helper = onnx_mod()
    return numpy_helper.from_array(np.asarray(array), name)


def detector_graph():
    """SCRFD's outputs for a [1,3,H,W] input: per stride s, N = (H/s)*(W/s)*2 anchors; scores [N,1],
    box distances [N,4] and keypoint offsets [N,10] in units of s from each anchor's centre. The
    first anchor's centre is (0,0), so its distances are the face's absolute coordinates / s."""
    _, T, helper, _ = onnx_mod()
    n = helper.make_node
    nodes = [
        n('Shape', ['input.1'], ['shape'], name='shape'),
        n('Gather', ['shape', 'i2'], ['h'], axis=0), n('Gather', ['shape', 'i3'], ['w'], axis=0),
        n('Cast', ['h'], ['hf'], to=T.FLOAT), n('Cast', ['w'], ['wf'], to=T.FLOAT),
        n('Unsqueeze', ['hf', 'ax0'], ['hf1']), n('Unsqueeze', ['wf', 'ax0'], ['wf1']),
        n('Concat', ['wf1', 'hf1', 'wf1', 'hf1'], ['whwh'], axis=0),
        n('Concat', ['wf1', 'hf1'] * 5, ['wh5'], axis=0),
    ]
    x1, y1, s = FACE_X1, FACE_Y1, FACE_SIZE
    box = np.array([-x1, -y1, x1 + s, y1 + s * 1.25], dtype=np.float32)  # (left, top, right, bottom) distances
    kps = np.stack([x1 + ARCFACE_KPS[:, 0] / 112 * s, y1 + ARCFACE_KPS[:, 1] / 112 * s * 1.1], axis=1).reshape(-1)
    inits = [const('i2', np.int64(2)), const('i3', np.int64(3)), const('ax0', np.array([0], np.int64)),
             const('ax1', np.array([1], np.int64)), const('zero', np.int64(0)), const('one', np.int64(1)),
             const('two', np.int64(2)), const('four', np.array([4], np.int64)), const('ten', np.array([10], np.int64))]
    outs = {'score': [], 'bbox': [], 'kps': []}
    for stride in (8, 16, 32):
        p = f's{stride}_'
        inits += [const(p + 'stride', np.int64(stride)), const(p + 'box', box / stride),
                  const(p + 'kps', kps.astype(np.float32) / stride),
                  const(p + 'hit', np.float32(0.9 if stride == 32 else 0.0))]
        nodes += [
            n('Div', ['h', p + 'stride'], [p + 'hg']), n('Div', ['w', p + 'stride'], [p + 'wg']),
            n('Mul', [p + 'hg', p + 'wg'], [p + 'hw']), n('Mul', [p + 'hw', 'two'], [p + 'n']),
            n('Unsqueeze', [p + 'n', 'ax0'], [p + 'n1']),
            n('Range', ['zero', p + 'n', 'one'], [p + 'idx']),
            n('Equal', [p + 'idx', 'zero'], [p + 'first']),
            n('Cast', [p + 'first'], [p + 'firstf'], to=T.FLOAT),
            n('Mul', [p + 'firstf', p + 'hit'], [p + 'sc']),
            n('Unsqueeze', [p + 'sc', 'ax1'], [p + 'score']),
            n('Mul', ['whwh', p + 'box'], [p + 'boxrow']),
            n('Concat', [p + 'n1', 'four'], [p + 'boxshape'], axis=0),
            n('Expand', [p + 'boxrow', p + 'boxshape'], [p + 'bbox']),
            n('Mul', ['wh5', p + 'kps'], [p + 'kpsrow']),
            n('Concat', [p + 'n1', 'ten'], [p + 'kpsshape'], axis=0),
            n('Expand', [p + 'kpsrow', p + 'kpsshape'], [p + 'kps_out']),
        ]
        outs['score'].append(helper.make_tensor_value_info(p + 'score', T.FLOAT, [None, 1]))
        outs['bbox'].append(helper.make_tensor_value_info(p + 'bbox', T.FLOAT, [None, 4]))
        outs['kps'].append(helper.make_tensor_value_info(p + 'kps_out', T.FLOAT, [None, 10]))
    inp = helper.make_tensor_value_info('input.1', T.FLOAT, [1, 3, '?', '?'])
    return helper.make_graph(nodes, 'scrfd_random', [inp], outs['score'] + outs['bbox'] + outs['kps'], inits)


def head_graph(size, dim, activation, seed, batch='None'):
    """[B,3,size,size] -> average pool to 8x8 -> fixed random projection -> [B,dim]."""
    _, T, helper, _ = onnx_mod()
    rng = np.random.default_rng(seed)
    k = size // 8
    nodes = [
        helper.make_node('AveragePool', ['input.1'], ['pooled'], name='pool', kernel_shape=[k, k], strides=[k, k]),
        helper.make_node('Flatten', ['pooled'], ['flat'], name='flatten', axis=1),
        helper.make_node('MatMul', ['flat', 'weight'], ['proj'], name='project'),
        helper.make_node('Add', ['proj', 'bias'], ['pre' if activation else 'output'], name='bias'),
    ]
    if activation:
        nodes.append(helper.make_node(activation, ['pre'], ['output'], name='activation'))
    inits = [const('weight', (rng.standard_normal((192, dim)) / np.sqrt(192)).astype(np.float32)),
             const('bias', (rng.standard_normal(dim) * 0.1).astype(np.float32))]
    inp = helper.make_tensor_value_info('input.1', T.FLOAT, [batch, 3, size, size])
    out = helper.make_tensor_value_info('output', T.FLOAT, [batch, dim])
    return helper.make_graph(nodes, f'head_{size}_{dim}', [inp], [out], inits)


def swapper_graph(seed):
    """inswapper_128: target [1,3,128,128] in 0..1, source [1,512] -> [1,3,128,128] in 0..1; emap last."""
    _, T, helper, _ = onnx_mod()
    rng = np.random.default_rng(seed)
    n = helper.make_node
    nodes = [
        n('MatMul', ['source', 'colour'], ['c'], name='colour'),
        n('Tanh', ['c'], ['ct']),
        n('Reshape', ['ct', 'cshape'], ['c4']),
        n('Mul', ['target', 'keep'], ['kept']),
        n('Mul', ['c4', 'amount'], ['tint']),
        n('Add', ['kept', 'tint'], ['mixed']),
        n('Clip', ['mixed', 'lo', 'hi'], ['output']),
    ]
    inits = [const('colour', (rng.standard_normal((512, 3)) / np.sqrt(512) * 4).astype(np.float32)),
             const('cshape', np.array([1, 3, 1, 1], np.int64)), const('keep', np.float32(0.8)),
             const('amount', np.float32(0.2)), const('lo', np.float32(0.0)), const('hi', np.float32(1.0)),
             const('emap', (rng.standard_normal((512, 512)) / np.sqrt(512)).astype(np.float32))]
    inputs = [helper.make_tensor_value_info('target', T.FLOAT, [1, 3, 128, 128]),
              helper.make_tensor_value_info('source', T.FLOAT, [1, 512])]
    out = helper.make_tensor_value_info('output', T.FLOAT, [1, 3, 128, 128])
    return helper.make_graph(nodes, 'inswapper_random', inputs, [out], inits)


# The released packs' files: name -> (what, graph).
def pack_files(recognition_name, detector_name, seed):
    return {
        '1k3d68.onnx': ('68 3D landmarks (output 3309)', lambda: head_graph(192, 3309, 'Tanh', seed + 1, batch=1)),
        '2d106det.onnx': ('106 2D landmarks (output 212)', lambda: head_graph(192, 212, 'Tanh', seed + 2, batch=1)),
        detector_name: ('SCRFD-10G detector layout, one fixed face', detector_graph),
        'genderage.onnx': ('gender/age (output 3)', lambda: head_graph(96, 3, 'Sigmoid', seed + 3, batch=1)),
        recognition_name: ('ArcFace recogniser (112x112 -> 512)', lambda: head_graph(112, 512, None, seed + 4)),
    }


PACKS = {
    'buffalo_l': pack_files('w600k_r50.onnx', 'det_10g.onnx', SEED),
    'antelopev2': pack_files('glintr100.onnx', 'scrfd_10g_bnkps.onnx', SEED + 10),
}
PACK_TASKS = {'detection', 'recognition', 'landmark_3d_68', 'landmark_2d_106', 'genderage'}


def make_insightface_pack(name):
    def make(paths):
        for path in paths:
            what, graph = PACKS[name][os.path.basename(path)]
            save_onnx(graph(), path, f'insightface {name} {what}')
    return make


def test_picture(width=160, height=120):
    rng = np.random.default_rng(SEED)
    return rng.integers(0, 255, (height, width, 3), dtype=np.uint8)


def verify_insightface_pack(name):
    def verify(paths):
        from insightface.app import FaceAnalysis
        root = os.path.dirname(os.path.dirname(os.path.dirname(paths[0])))
        app = FaceAnalysis(name=name, root=root, providers=['CPUExecutionProvider'])
        if set(app.models) != PACK_TASKS:
            raise SystemExit(f'{name}: tasks {sorted(app.models)}, expected {sorted(PACK_TASKS)}')
        for det_size in ((640, 640), (320, 320)):
            app.prepare(ctx_id=-1, det_size=det_size)
            embeddings = []
            for w, h in ((160, 120), (96, 96), (120, 160)):
                faces = app.get(test_picture(w, h))
                if len(faces) != 1:
                    raise SystemExit(f'{name}: {len(faces)} faces on a {w}x{h} picture at {det_size}, expected 1')
                f = faces[0]
                x1, y1, x2, y2 = f.bbox
                if not (0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h) or f.kps.shape != (5, 2):
                    raise SystemExit(f'{name}: face {f.bbox} kps {f.kps} outside a {w}x{h} picture')
                if f.normed_embedding.shape != (512,) or f.landmark_2d_106.shape != (106, 2):
                    raise SystemExit(f'{name}: embedding {f.embedding.shape}, landmarks {f.landmark_2d_106.shape}')
                embeddings.append(f.normed_embedding)
            if np.allclose(embeddings[0], embeddings[1]):
                raise SystemExit(f'{name}: two different faces gave one embedding')
        print(f'  {name}: FaceAnalysis routes {sorted(app.models)}; one face per picture, box {np.round(f.bbox)}')
    return verify


def make_inswapper(paths):
    save_onnx(swapper_graph(SEED + 20), paths[0], 'insightface inswapper_128 layout')


def verify_inswapper(paths):
    import insightface
    from insightface.model_zoo.inswapper import INSwapper
    swapper = insightface.model_zoo.get_model(paths[0], providers=['CPUExecutionProvider'])
    if not isinstance(swapper, INSwapper) or swapper.emap.shape != (512, 512):
        raise SystemExit(f'routed to {type(swapper).__name__}, emap {getattr(swapper, "emap", None)}')
    root = os.path.dirname(paths[0])
    from insightface.app import FaceAnalysis
    app = FaceAnalysis(name='buffalo_l', root=root, providers=['CPUExecutionProvider'])
    app.prepare(ctx_id=-1, det_size=(640, 640))
    target = test_picture(160, 120)
    source = app.get(test_picture(96, 96))[0]
    out = swapper.get(target, app.get(target)[0], source, paste_back=True)
    if out.shape != target.shape or np.array_equal(out, target):
        raise SystemExit(f'swap gave {out.shape}, changed: {not np.array_equal(out, target)}')
    print(f'  inswapper: routed to INSwapper, swap changed {(out != target).any(axis=2).mean():.0%} of the picture')


# ---------------------------------------------------------------------------------------------------- adapters

def comfy_helpers():
    """make_models.py's helpers (ComfyUI's ops, default initialisers, fp16 saving), imported, not copied."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_models
    return make_models


def pack_module(pack, module):
    import importlib
    sys.path.insert(0, os.path.join(os.getcwd(), 'custom_nodes'))
    return importlib.import_module(f'{pack}.{module}')


def lora_pair(rank, width_in, width_out):
    import torch
    down, up = torch.nn.Linear(width_in, rank, bias=False), torch.nn.Linear(rank, width_out, bias=False)
    return down.weight.detach(), up.weight.detach()


def make_faceid_plusv2_sd15(paths):
    """h94's ip-adapter-faceid-plusv2_sd15.bin: image_proj is IPAdapter_plus's ProjModelFaceIdPlus
    (512-d insightface embedding + CLIP-ViT-H penultimate 1280-d), ip_adapter the 16 cross-attention
    k/v projections plus the rank-128 LoRA of all 32 attention processors (self-attention even,
    cross-attention odd, as diffusers numbers them), which is what marks the file as FaceID."""
    import torch
    mm = comfy_helpers()
    proj_models = pack_module('ComfyUI_IPAdapter_plus', 'image_proj_models')
    torch.manual_seed(SEED + 30)
    proj = proj_models.ProjModelFaceIdPlus(cross_attention_dim=768, id_embeddings_dim=512,
                                           clip_embeddings_dim=1280, num_tokens=4)
    mm.torch_default_init(proj, SEED + 30)
    ip = {}
    for n, width in enumerate(mm.IP_LAYERS_SD15):
        for index, context in ((2 * n, width), (2 * n + 1, 768)):
            for name, w_in in (('to_q', width), ('to_k', context), ('to_v', context), ('to_out', width)):
                ip[f'{index}.{name}_lora.down.weight'], ip[f'{index}.{name}_lora.up.weight'] = lora_pair(128, w_in, width)
        for kv in ('to_k_ip', 'to_v_ip'):
            ip[f'{2 * n + 1}.{kv}.weight'] = torch.nn.Linear(768, width, bias=False).weight.detach()
    data = {'image_proj': mm.fp16(proj.state_dict()), 'ip_adapter': mm.fp16(ip)}
    mm.save(data, paths[0], 'IP-Adapter FaceID Plus V2 SD1.5 layout', pth=True)


def verify_faceid_plusv2_sd15(paths):
    """IPAdapterModelLoader's loader, then the pack's IPAdapter built with the flags ipadapter_execute
    derives from the file, and one projection of a face embedding and a CLIP embedding."""
    import torch
    utils = pack_module('ComfyUI_IPAdapter_plus', 'utils')
    plus = pack_module('ComfyUI_IPAdapter_plus', 'IPAdapterPlus')
    model = utils.ipadapter_model_loader(paths[0])
    is_plus = 'perceiver_resampler.proj_in.weight' in model['image_proj']
    is_faceid = '0.to_q_lora.down.weight' in model['ip_adapter']
    if not (is_plus and is_faceid and model.get('faceidplusv2')):
        raise SystemExit(f'IPAdapter_plus reads plus={is_plus} faceid={is_faceid} v2={model.get("faceidplusv2")}')
    ip = plus.IPAdapter(model, cross_attention_dim=768, output_cross_attention_dim=768, clip_embeddings_dim=1280,
                        clip_extra_context_tokens=4, is_sdxl=False, is_plus=True, is_faceid=True).float()
    out = ip.get_image_embeds_faceid_plus(torch.randn(1, 512), torch.randn(1, 257, 1280), 1.0, True, 0)
    print(f'  IPAdapter_plus loads it as FaceID Plus V2: {type(ip.image_proj_model).__name__}, '
          f'{len(ip.ip_layers.to_kvs)} k/v and LoRA layers, embeds {tuple(out.shape)}')


def make_instantid(paths):
    """InstantID's ip-adapter.bin: the InstantID pack's Resampler (1280 wide, 16 queries over the
    512-d insightface embedding, out to SDXL's 2048) and the 70 SDXL cross-attention k/v pairs."""
    import torch
    mm = comfy_helpers()
    resampler = pack_module('ComfyUI_InstantID', 'resampler')
    torch.manual_seed(SEED + 31)
    proj = resampler.Resampler(dim=1280, depth=4, dim_head=64, heads=20, num_queries=16, embedding_dim=512,
                               output_dim=2048, ff_mult=4)
    mm.torch_default_init(proj, SEED + 31)
    ip = {}
    for n, width in enumerate(mm.IP_LAYERS_SDXL):
        for kv in ('to_k_ip', 'to_v_ip'):
            ip[f'{2 * n + 1}.{kv}.weight'] = torch.nn.Linear(2048, width, bias=False).weight.detach()
    mm.save({'image_proj': mm.fp16(proj.state_dict()), 'ip_adapter': mm.fp16(ip)}, paths[0],
            'InstantID ip-adapter layout', pth=True)


def verify_instantid(paths):
    """InstantIDModelLoader.load_model on the file (strict load into the pack's Resampler)."""
    import torch
    import folder_paths
    instantid = pack_module('ComfyUI_InstantID', 'InstantID')
    folder_paths.add_model_folder_path('instantid', os.path.dirname(paths[0]))
    (model,) = instantid.InstantIDModelLoader().load_model(os.path.basename(paths[0]))
    cond, _ = model.float().get_image_embeds(torch.randn(1, 1, 512), torch.zeros(1, 1, 512))
    print(f'  InstantIDModelLoader: {type(model.image_proj_model).__name__}, {len(model.ip_layers.to_kvs)} k/v layers, '
          f'embeds {tuple(cond.shape)}')


def reactor_path():
    sys.path.insert(0, os.path.join(os.getcwd(), 'custom_nodes', 'ComfyUI-ReActor'))


def make_reactor_restore(paths):
    """What ReActor's face restoration loads: GFPGAN 1.4 (`facerestore_models`, its r_chainner
    GFPGANv1Clean, saved as the release is: {'params_ema': ...}, fp32) and, in `facedetection`, the
    RetinaFace-ResNet50 detector and ParseNet face parser of its r_facelib. The detector's
    classification head is zero with a background bias, so it finds no face and the restorer is
    loaded but has nothing to restore: a random RetinaFace could not put a face where insightface's
    detector put the swapped one (its heads are convolutions, the same at every place)."""
    import unittest.mock
    import torch
    mm = comfy_helpers()
    reactor_path()
    from r_chainner.archs.face.gfpganv1_clean_arch import GFPGANv1Clean
    from r_facelib.detection.retinaface.retinaface import RetinaFace
    from r_facelib.parsing.parsenet import ParseNet
    with unittest.mock.patch.object(GFPGANv1Clean, 'load_state_dict', lambda self, *a, **k: None):
        gfpgan = GFPGANv1Clean({})
    mm.torch_default_init(gfpgan, SEED + 40)
    mm.save({'params_ema': gfpgan.state_dict()}, paths[0], 'GFPGAN v1.4 layout (r_chainner GFPGANv1Clean)', pth=True)
    detector = RetinaFace(network_name='resnet50', half=False)
    mm.torch_default_init(detector, SEED + 41)
    with torch.no_grad():
        for head in detector.ClassHead:
            head.conv1x1.weight.zero_()
            head.conv1x1.bias.copy_(torch.tensor([8.0, -8.0] * head.num_anchors))
    mm.save(detector.state_dict(), paths[1], 'RetinaFace ResNet-50 layout, finds no face', pth=True)
    parser = ParseNet(in_size=512, out_size=512, parsing_ch=19)
    mm.torch_default_init(parser, SEED + 42)
    mm.save(parser.state_dict(), paths[2], 'ParseNet face parsing layout', pth=True)


def verify_reactor_restore(paths):
    """ReActor's own loading: r_chainner's model_loading detects GFPGAN and restores a 512 face;
    r_facelib's FaceRestoreHelper loads the detector and parser (strict) and runs on a picture."""
    import torch
    import comfy.utils
    reactor_path()
    from r_chainner import model_loading
    from r_facelib.utils.face_restoration_helper import FaceRestoreHelper
    model = model_loading.load_state_dict(comfy.utils.load_torch_file(paths[0], safe_load=True)).eval()
    with torch.no_grad():
        out = model(torch.zeros(1, 3, 512, 512))[0]
    helper = FaceRestoreHelper(1, face_size=512, crop_ratio=(1, 1), det_model='retinaface_resnet50', save_ext='png',
                               use_parse=True, device=torch.device('cpu'))
    picture = test_picture(160, 120)
    helper.read_image(picture)
    faces = helper.get_face_landmarks_5(only_center_face=False, resize=640, eye_dist_threshold=5)
    helper.align_warp_face()
    helper.get_inverse_affine(None)
    pasted = helper.paste_faces_to_input_image()
    # read_image scales a small picture up to 512 px on its short side; ReActor scales the result back
    if pasted.shape[2] != 3 or abs(pasted.shape[1] / pasted.shape[0] - 160 / 120) > 0.01:
        raise SystemExit(f'FaceRestoreHelper gave {pasted.shape} for a 160x120 picture')
    print(f'  ReActor: {model.model_arch} restores to {tuple(out.shape)}; RetinaFace + ParseNet load, {faces} faces found')


def make_reactor_nsfw(paths):
    """The safety check ReActor runs on every target picture before swapping (scripts/reactor_sfw.py):
    transformers' image-classification pipeline over AdamCodd/vit-base-nsfw-detector (ViT-B/16 at
    384 px, labels sfw/nsfw), read from models/nsfw_detector/. Without it ReActor tries to fetch it
    and, offline, treats the picture as unsafe and returns it unswapped. The classifier's weights
    are zero with a bias for "sfw", so every picture passes, as a real detector passes the suite's."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor
    folder = os.path.dirname(paths[0])
    config = ViTConfig(image_size=384, patch_size=16, num_labels=2, id2label={0: 'sfw', 1: 'nsfw'},
                       label2id={'sfw': 0, 'nsfw': 1})
    torch.manual_seed(SEED + 45)
    model = ViTForImageClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([4.0, -4.0]))
    model.save_pretrained(folder, safe_serialization=True)
    ViTImageProcessor(do_resize=True, size={'height': 384, 'width': 384}, image_mean=[0.5] * 3,
                      image_std=[0.5] * 3).save_pretrained(folder)
    print(f'  saved {folder}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M params')


def verify_reactor_nsfw(paths):
    """ReActor's own check on a picture: reactor_sfw.nsfw_image (False: safe, the swap goes on)."""
    import io
    from PIL import Image
    reactor_path()
    from scripts import reactor_sfw
    buffer = io.BytesIO()
    Image.fromarray(test_picture(160, 120)).save(buffer, format='PNG')
    if reactor_sfw.nsfw_image(buffer.getvalue(), os.path.dirname(paths[0])):
        raise SystemExit('ReActor judged the picture unsafe')
    print('  ReActor: nsfw_image loads the detector from its folder and passes the picture')


# facexlib's RetinaFace landmark offsets for ArcFace's five points, in its units (0.1 x the anchor's
# size from the anchor's centre), for a face 80 % of the anchor's size.
RETINA_KPS = ((ARCFACE_KPS - 56.0) / 112.0 * 0.8 * 10.0).reshape(-1)


def facexlib_weights():
    import facexlib
    return os.path.join(os.path.dirname(facexlib.__file__), 'weights')


def pulid_pack():
    return pack_module('PuLID_ComfyUI', 'pulid')


EVA_CLIP_FILE = 'models--QuanSun--EVA-CLIP/snapshots/{}/EVA02_CLIP_L_336_psz14_s6B.pt'
EVA_CLIP_SNAPSHOT = '0' * 40


def eva_clip_path():
    from huggingface_hub import constants
    return os.path.join(constants.HF_HUB_CACHE, EVA_CLIP_FILE.format(EVA_CLIP_SNAPSHOT))


def make_pulid(paths):
    """PuLID for SDXL and what it loads besides: the adapter (PuLID's IDEncoder over insightface's
    512-d embedding + EVA-CLIP's 768-d + five hidden states, and the 70 SDXL k/v pairs), the
    EVA02-CLIP-L-14-336 checkpoint PuLID's own eva_clip code builds and reads from the Hugging Face
    cache, and facexlib's RetinaFace-ResNet50 and BiSeNet in facexlib's weights folder. The
    RetinaFace finds a face: only the larger-level anchors of 256 px fire (the classification heads
    are zero with a bias), boxes are the anchors, the landmark heads' bias places ArcFace's five
    points inside each, and PuLID keeps one of those left after NMS (`only_center_face`)."""
    import torch
    mm = comfy_helpers()
    if wanted(paths[0]):
        encoders = pack_module('PuLID_ComfyUI', 'encoders')
        torch.manual_seed(SEED + 50)
        idenc = encoders.IDEncoder()
        mm.torch_default_init(idenc, SEED + 50)
        sd = {f'image_proj.{k}': v for k, v in idenc.state_dict().items()}
        for n, width in enumerate(mm.IP_LAYERS_SDXL):
            for kv in ('to_k_ip', 'to_v_ip'):
                sd[f'ip_adapter.{2 * n + 1}.{kv}.weight'] = torch.nn.Linear(2048, width, bias=False).weight.detach()
        mm.save(mm.fp16(sd), paths[0], 'PuLID SDXL layout')

    if wanted(paths[1]):
        torch.manual_seed(SEED + 51)
        model = pack_module('PuLID_ComfyUI', 'eva_clip.factory').create_model('EVA02-CLIP-L-14-336', force_custom_clip=True)
        mm.torch_default_init(model, SEED + 51)
        os.makedirs(os.path.dirname(paths[1]), exist_ok=True)
        mm.save(mm.fp16(model.state_dict()), paths[1], 'EVA02-CLIP-L-14-336 layout', pth=True)
        repo = os.path.dirname(os.path.dirname(os.path.dirname(paths[1])))
        os.makedirs(os.path.join(repo, 'refs'), exist_ok=True)
        with open(os.path.join(repo, 'refs', 'main'), 'w') as f:
            f.write(EVA_CLIP_SNAPSHOT)

    from facexlib.detection.retinaface import RetinaFace
    from facexlib.parsing.bisenet import BiSeNet
    from facexlib.parsing.parsenet import ParseNet
    if wanted(paths[2]):
        detector = RetinaFace(network_name='resnet50', half=False, device='cpu')
        mm.torch_default_init(detector, SEED + 52)
        with torch.no_grad():
            for level, (cls, box, lmk) in enumerate(zip(detector.ClassHead, detector.BboxHead, detector.LandmarkHead)):
                for conv in (cls.conv1x1, box.conv1x1, lmk.conv1x1):
                    conv.weight.zero_()
                    conv.bias.zero_()
                cls.conv1x1.bias.copy_(torch.tensor([-8.0, 8.0, 8.0, -8.0] if level == 2 else [8.0, -8.0] * 2))
                lmk.conv1x1.bias.copy_(torch.from_numpy(np.tile(RETINA_KPS, 2)))
        mm.save(detector.state_dict(), paths[2], 'RetinaFace ResNet-50 layout, one face per anchor of 256 px', pth=True)
    if wanted(paths[3]):
        parser = BiSeNet(num_class=19)
        mm.torch_default_init(parser, SEED + 53)
        mm.save(parser.state_dict(), paths[3], 'BiSeNet face parsing layout', pth=True)
    if wanted(paths[4]):
        # FaceRestoreHelper loads ParseNet in its constructor, although PuLID replaces it with BiSeNet
        parsenet = ParseNet(in_size=512, out_size=512, parsing_ch=19)
        mm.torch_default_init(parsenet, SEED + 54)
        mm.save(parsenet.state_dict(), paths[4], 'ParseNet face parsing layout', pth=True)


def verify_pulid(paths):
    """PuLID's own loader nodes (PulidModelLoader, PulidEvaClipLoader, PulidInsightFaceLoader) and
    the part of ApplyPulid that runs before the sampler: facexlib finds and crops one face, BiSeNet
    parses it, EVA-CLIP encodes it, and the adapter turns both embeddings into 32 tokens."""
    import torch
    import folder_paths
    pulid = pulid_pack()
    folder_paths.add_model_folder_path('pulid', os.path.dirname(paths[0]))
    (model,) = pulid.PulidModelLoader().load_model(os.path.basename(paths[0]))
    (eva,) = pulid.PulidEvaClipLoader().load_eva_clip()
    (analysis,) = pulid.PulidInsightFaceLoader().load_insightface('CPU')
    from facexlib.parsing import init_parsing_model
    from facexlib.utils.face_restoration_helper import FaceRestoreHelper
    helper = FaceRestoreHelper(upscale_factor=1, face_size=512, crop_ratio=(1, 1), det_model='retinaface_resnet50',
                               save_ext='png', device=torch.device('cpu'))
    helper.face_parse = init_parsing_model(model_name='bisenet', device=torch.device('cpu'))
    picture = test_picture(96, 96)
    iface = analysis.get(picture)
    helper.read_image(picture)
    helper.get_face_landmarks_5(only_center_face=True)
    helper.align_warp_face()
    if len(iface) != 1 or len(helper.cropped_faces) != 1:
        raise SystemExit(f'insightface found {len(iface)} faces, facexlib cropped {len(helper.cropped_faces)}')
    face = pulid.image_to_tensor(helper.cropped_faces[0]).unsqueeze(0).permute(0, 3, 1, 2)
    import torchvision.transforms as T
    parsing = helper.face_parse(T.functional.normalize(face, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))[0]
    image = T.functional.resize(face, eva.image_size, T.InterpolationMode.NEAREST)
    image = T.functional.normalize(image, eva.image_mean, eva.image_std)
    with torch.no_grad():
        cond_vit, hidden = eva(image, return_all_features=False, return_hidden=True, shuffle=False)
        id_cond = torch.cat([torch.from_numpy(iface[0].embedding).unsqueeze(0), cond_vit / cond_vit.norm(dim=1, keepdim=True)], -1)
        tokens = model.float().get_image_embeds(id_cond, [h.float() for h in hidden])
    print(f'  PuLID: adapter {type(model.image_proj_model).__name__} with {len(model.ip_layers.to_kvs)} k/v layers; '
          f'EVA-CLIP {type(eva).__name__} at {eva.image_size}; facexlib face {np.asarray(helper.det_faces).reshape(-1)[:4].round()}, '
          f'parsing {tuple(parsing.shape)}; id tokens {tuple(tokens.shape)}')


FORCE = False


def wanted(path):
    """Whether a model with several files makes this one: it is absent, or --force."""
    return FORCE or not os.path.exists(path)


def M(name, paths, make, verify):
    """An item for make_models.py's driver, which makes and verifies one file per item (its other
    names are hard links): here an item may be several different files, so the driver is given the
    first and make/verify get them all, relative to the same models folder."""
    def expand(first):
        models_dir = first[:len(first) - len(paths[0])]
        return [os.path.join(models_dir, p) for p in paths]
    return {'name': name, 'paths': paths[:1], 'note': ' '.join(paths[1:]),
            'make': lambda first: make(expand(first)), 'verify': lambda first: verify(expand(first))}


def models():
    packs = [M(name, [f'insightface/models/{name}/{f}' for f in sorted(files)],
               make_insightface_pack(name), verify_insightface_pack(name)) for name, files in PACKS.items()]
    return packs + [
        M('inswapper', ['insightface/inswapper_128.onnx'], make_inswapper, verify_inswapper),
        M('faceid-plusv2-sd15', ['ipadapter/ip-adapter-faceid-plusv2_sd15.bin'], make_faceid_plusv2_sd15,
          verify_faceid_plusv2_sd15),
        M('instantid', ['instantid/ip-adapter.bin'], make_instantid, verify_instantid),
        M('reactor-restore', ['facerestore_models/GFPGANv1.4.pth', 'facedetection/detection_Resnet50_Final.pth',
                              'facedetection/parsing_parsenet.pth'], make_reactor_restore, verify_reactor_restore),
        M('reactor-nsfw', ['nsfw_detector/vit-base-nsfw-detector/model.safetensors',
                           'nsfw_detector/vit-base-nsfw-detector/config.json',
                           'nsfw_detector/vit-base-nsfw-detector/preprocessor_config.json'],
          make_reactor_nsfw, verify_reactor_nsfw),
        M('pulid', ['pulid/ip-adapter_pulid_sdxl_fp16.safetensors', eva_clip_path(),
                    os.path.join(facexlib_weights(), 'detection_Resnet50_Final.pth'),
                    os.path.join(facexlib_weights(), 'parsing_bisenet.pth'),
                    os.path.join(facexlib_weights(), 'parsing_parsenet.pth')], make_pulid, verify_pulid),
    ]


def main():
    """make_models.py's command line and driver (--only, --force, --verify, --list) over these models."""
    global FORCE
    FORCE = '--force' in sys.argv
    driver = comfy_helpers()  # also runs ComfyUI on the CPU device, as the server does (--cpu)
    driver.models = models
    driver.main()


if __name__ == '__main__':
    main()
