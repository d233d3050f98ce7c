"""How long ComfyUI's prompt worker holds the server when it collects garbage.

main.py's prompt_worker calls gc.collect() after a prompt at most every 10 seconds (its
gc_collect_interval), in the thread that runs prompts, holding Python's lock: for that time the
server starts no prompt and answers no request (/view, /history). Its length grows with the
objects the process holds, most of them the node packs' imports. This loads ComfyUI's nodes as the
server does, without the custom nodes and then with them, and times gc.collect() after each.

Run inside the CPU chroot, in ComfyUI's folder (the same environment as the server):

    chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin \
      HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=2 \
      sh -c 'cd /opt/comfy/ComfyUI && python3 /opt/comfy/imagegen/gc-pause.py'

(copy this file to $ROOTFS/opt/comfy/imagegen/ first). It prints one JSON line.
"""

import asyncio
import gc
import json
import os
import sys
import time

# Python puts the script's own folder first on the path, not the working directory: ComfyUI's
# packages (comfy, folder_paths, nodes) are found in its folder, where main.py finds them.
sys.path.insert(0, os.getcwd())
sys.argv = [sys.argv[0], "--cpu"]
import comfy.options  # noqa: E402

comfy.options.enable_args_parsing()
import folder_paths  # noqa: E402,F401  (sets up the model folders as main.py does)
# main.py imports ComfyUI's `utils` package before any node: without it, a module that puts
# comfy/ on the path first makes `utils` comfy/utils.py, and every module importing the server
# (`utils.install_util`) fails, leaving out nodes the server has.
import utils.extra_config  # noqa: E402,F401
import nodes  # noqa: E402


def collections(times=5):
    """gc.collect() a few times in a row: the first after loading, then the steady ones."""
    taken = []
    for _ in range(times):
        started = time.perf_counter()
        gc.collect()
        taken.append(round((time.perf_counter() - started) * 1000, 1))
    return taken


def tracked():
    return len(gc.get_objects())


asyncio.run(nodes.init_extra_nodes(init_custom_nodes=False))
core = {"objects": tracked(), "gc_collect_ms": collections()}
asyncio.run(nodes.init_external_custom_nodes())
packs = {"objects": tracked(), "gc_collect_ms": collections()}
print(json.dumps({"core_nodes_only": core, "with_custom_nodes": packs, "node_classes": len(nodes.NODE_CLASS_MAPPINGS)}))
