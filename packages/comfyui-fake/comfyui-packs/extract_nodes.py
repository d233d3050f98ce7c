"""
Writes one pack's node definitions as ComfyUI's `GET /object_info` answers them, read from the
pack's own source: the pack is imported with stand-ins for what it imports from ComfyUI and its
heavy dependencies (torch, numpy, ...), and each chosen class's INPUT_TYPES / RETURN_TYPES are
shaped as ComfyUI's server does (`server.py` node_info).

  python3 extract_nodes.py SOURCE_DIR PACK_NAME CLASS... > PACK_NAME.json

Model lists (folder_paths.get_filename_list) come out as `["<folder:NAME>"]` placeholders and
are split off into the output's `model_inputs`, as the fake fills them from the files it is given.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import math
import tempfile
import types
import urllib.request

SOURCE, PACK, CLASSES = sys.argv[1], sys.argv[2], sys.argv[3:]
# Packs print banners while they load: keep them off the JSON.
OUT, sys.stdout = sys.stdout, sys.stderr

# Values ComfyUI's own modules hand to INPUT_TYPES, taken from the recorded core object_info.
CORE = json.load(open(os.path.join(os.path.dirname(__file__), '..', 'comfyui-captures', 'object_info.json')))
SAMPLERS = CORE['KSampler']['input']['required']['sampler_name'][0]
SCHEDULERS = CORE['KSampler']['input']['required']['scheduler'][0]


class _AnyMeta(type):
    __version__ = "99.0.0"

    def __getattr__(cls, name):
        if name.startswith('__') and name.endswith('__'):
            raise AttributeError(name)
        return Anything

    def __call__(cls, *args, **kwargs):
        # A decorator factory's result applied to a function leaves the function as it is.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _AnyMeta):
            return args[0]
        return Anything

    def __getitem__(cls, key):
        return Anything

    def __setitem__(cls, key, value):
        pass

    def __lt__(cls, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __or__(cls, other):
        return Anything

    __ror__ = __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = __matmul__ = __or__
    __neg__ = __invert__ = lambda cls: Anything


class Anything(metaclass=_AnyMeta):
    """Stands for any object of a stubbed module: a class, a function, a constant."""


class StubModule(types.ModuleType):
    __version__ = '99.0.0'

    def __getattr__(self, name):
        if name.startswith('__') and name.endswith('__'):
            raise AttributeError(name)
        return Anything


def folder_list(folder):
    return [f'<folder:{folder}>']


# Packs that list a folder by reading it (not through folder_paths) find one placeholder file per
# extension there; packs that would download a missing model at import find it present.
MODELS_DIR = tempfile.mkdtemp()
for folder in ('facerestore_models', 'insightface', 'LLM'):
    os.makedirs(os.path.join(MODELS_DIR, folder))
    for ext in ('.pth', '.onnx', '.safetensors'):
        open(os.path.join(MODELS_DIR, folder, f'<folder:{folder}>{ext}'), 'w').close()


def no_network(*args, **kwargs):
    raise SystemExit(f'the pack tried to download at import: {args[0] if args else kwargs}')


urllib.request.urlopen = urllib.request.urlretrieve = no_network

folder_paths = StubModule('folder_paths')
folder_paths.models_dir = MODELS_DIR
folder_paths.base_path = '/'
folder_paths.folder_names_and_paths = {}
folder_paths.supported_pt_extensions = {'.safetensors', '.pt', '.pth', '.ckpt', '.bin'}
folder_paths.get_filename_list = folder_list
folder_paths.get_folder_paths = lambda folder: [os.path.join(MODELS_DIR, folder)]
folder_paths.add_model_folder_path = lambda *a, **k: None
folder_paths.get_input_directory = lambda: '/input'
folder_paths.get_output_directory = lambda: '/output'
folder_paths.get_temp_directory = lambda: '/temp'
folder_paths.get_full_path = lambda *a: None
sys.modules['folder_paths'] = folder_paths

samplers = StubModule('comfy.samplers')
samplers.KSampler = type('KSampler', (), {'SAMPLERS': SAMPLERS, 'SCHEDULERS': SCHEDULERS})
samplers.SAMPLER_NAMES = SAMPLERS
samplers.SCHEDULER_NAMES = SCHEDULERS
sys.modules['comfy.samplers'] = samplers
# ComfyUI's nodes.py and the numeric constants packs compute defaults from.
core_nodes = StubModule('nodes')
core_nodes.MAX_RESOLUTION = 16384
sys.modules['nodes'] = core_nodes
numpy = StubModule('numpy')
numpy.__path__ = []
numpy.pi, numpy.e = math.pi, math.e
sys.modules['numpy'] = numpy
# No other pack is installed beside this one (packs look for each other under custom_nodes).
custom_nodes = types.ModuleType('custom_nodes')
custom_nodes.__path__ = []
sys.modules['custom_nodes'] = custom_nodes
comfy = StubModule('comfy')
comfy.__path__ = []
comfy.samplers = samplers
sys.modules['comfy'] = comfy


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """First on the path: every module that is neither Python's own nor the pack's is a stand-in
    (whatever happens to be installed here must not change the answer)."""

    def find_spec(self, name, path, target=None):
        top = name.split('.')[0]
        if top in sys.stdlib_module_names or top in ('pack', 'custom_nodes') or own_module(top):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


package_dir = os.path.abspath(SOURCE)


def own_module(top):
    """A module of the pack imported by its bare name (packs put their folder on sys.path)."""
    return os.path.exists(os.path.join(package_dir, top)) or os.path.exists(os.path.join(package_dir, top + '.py'))


sys.meta_path.insert(0, StubFinder())
sys.path.insert(0, os.path.dirname(package_dir))
spec = importlib.util.spec_from_file_location(
    'pack', os.path.join(package_dir, '__init__.py'), submodule_search_locations=[package_dir]
)
pack = importlib.util.module_from_spec(spec)
sys.modules['pack'] = pack
spec.loader.exec_module(pack)

mappings = pack.NODE_CLASS_MAPPINGS
display_names = getattr(pack, 'NODE_DISPLAY_NAME_MAPPINGS', {})


def plain(value, where):
    """JSON of a declaration, refusing anything a stand-in leaked into."""
    if isinstance(value, _AnyMeta):
        raise SystemExit(f'{where}: a stubbed value reached the declaration')
    if isinstance(value, dict):
        return {k: plain(v, f'{where}.{k}') for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, where) for v in value]
    return value


def node_info(name):
    cls = mappings[name]
    inputs = plain(cls.INPUT_TYPES(), f'{name}.INPUT_TYPES')
    outputs = plain(list(cls.RETURN_TYPES), f'{name}.RETURN_TYPES')
    info = {
        'input': inputs,
        'input_order': {group: list(entries.keys()) for group, entries in inputs.items()},
        'output': outputs,
        'output_is_list': list(getattr(cls, 'OUTPUT_IS_LIST', [False] * len(outputs))),
        'output_name': list(getattr(cls, 'RETURN_NAMES', outputs)),
        'name': name,
        'display_name': display_names.get(name, name),
        'description': getattr(cls, 'DESCRIPTION', ''),
        'python_module': f'custom_nodes.{os.path.basename(package_dir)}',
        'category': getattr(cls, 'CATEGORY', 'sd'),
        'output_node': bool(getattr(cls, 'OUTPUT_NODE', False)),
    }
    if hasattr(cls, 'OUTPUT_TOOLTIPS'):
        info['output_tooltips'] = list(cls.OUTPUT_TOOLTIPS)
    if getattr(cls, 'DEPRECATED', False):
        info['deprecated'] = True
    if getattr(cls, 'EXPERIMENTAL', False):
        info['experimental'] = True
    return info


def split_model_inputs(infos):
    """Placeholders out of the lists, into `class → input → folder`."""
    model_inputs = {}
    for name, info in infos.items():
        for group in info['input'].values():
            for input_name, entry in group.items():
                values = entry[0] if isinstance(entry[0], list) else None
                if values is None:
                    continue
                folders = [v[len('<folder:') :].split('>')[0] for v in values if isinstance(v, str) and v.startswith('<folder:')]
                if folders:
                    model_inputs.setdefault(name, {})[input_name] = folders[0]
                    entry[0] = [v for v in values if not (isinstance(v, str) and v.startswith('<folder:'))]
    return model_inputs


missing = [name for name in CLASSES if name not in mappings]
if missing:
    raise SystemExit(f'{PACK} has no {", ".join(missing)}; it has {", ".join(sorted(mappings))}')
infos = {name: node_info(name) for name in CLASSES}
model_inputs = split_model_inputs(infos)
json.dump({'model_inputs': model_inputs, 'object_info': infos}, OUT, indent=1, sort_keys=True)
OUT.write('\n')
