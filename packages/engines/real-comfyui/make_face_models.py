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

Each file is loaded back by insightface itself (`FaceAnalysis` on the pack's folder: every model
routed to the expected task, one face found on a drawn picture; `model_zoo.get_model` on the
swapper and a swap run) and the adapters by the packs' own loader code. A file that exists is left
alone unless --force.
"""
import argparse
import logging
import os
import sys
import time

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


def M(name, paths, make, verify):
    return {'name': name, 'paths': paths, 'make': make, 'verify': verify}


def models():
    packs = [M(name, [f'insightface/models/{name}/{f}' for f in sorted(files)],
               make_insightface_pack(name), verify_insightface_pack(name)) for name, files in PACKS.items()]
    return packs + [
        M('inswapper', ['insightface/inswapper_128.onnx'], make_inswapper, verify_inswapper),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('models_dir')
    parser.add_argument('--only', default='', help='comma-separated names (see --list)')
    parser.add_argument('--force', action='store_true', help='make the files again although they exist')
    parser.add_argument('--verify', action='store_true', help='verify the files that exist too')
    parser.add_argument('--list', action='store_true')
    opts = parser.parse_args()
    items = models()
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
        t0 = time.time()
        try:
            made = opts.force or not all(os.path.exists(p) for p in paths)
            if made:
                print(f"[{item['name']}] making {' '.join(paths)}", flush=True)
                item['make'](paths)
            if made or opts.verify:
                print(f"[{item['name']}] verifying", flush=True)
                item['verify'](paths)
                print(f"[{item['name']}] ok in {time.time() - t0:.0f}s", flush=True)
            else:
                print(f"[{item['name']}] present: {paths[0]}", flush=True)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - report and go on with the others
            logging.exception('failed')
            print(f"[{item['name']}] FAILED: {error}", flush=True)
            failed.append(item['name'])
    if failed:
        raise SystemExit(f'failed: {failed}')


if __name__ == '__main__':
    main()
