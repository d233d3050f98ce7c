import type { NodeFailure } from './prompt-executor.ts';

/**
 * How ComfyUI 0.3.64 reports a node that ran out of memory (execution.py `execute`): the
 * exception's type by its full name and `exception_message` written as `"{ex}\n{tips}"`, where
 * `tips` is set only for `comfy.model_management.OOM_EXCEPTION` (`torch.cuda.OutOfMemoryError`,
 * which PyTorch 2.5 and later name `torch.OutOfMemoryError`); then ComfyUI unloads every model.
 * The CUDA text is PyTorch's cudaMallocAsync allocator's (the backend ComfyUI chooses on recent
 * NVIDIA drivers), as users' reports quote it. On a CPU server an allocation PyTorch cannot make
 * is a plain RuntimeError from its DefaultCPUAllocator, with no tips (the form the real-server
 * recording, `real-comfyui/record-out-of-memory.sh`, captures).
 */

/** execution.py's tips for an out-of-memory exception. */
export const OUT_OF_MEMORY_TIPS =
  'This error means you ran out of memory on your GPU.\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.';

const CUDA_MESSAGE = [
  'Allocation on device 0 would exceed allowed memory. (out of memory)',
  'Currently allocated     : 22.21 GiB',
  'Requested               : 1.50 GiB',
  'Device limit            : 23.64 GiB',
  'Free (according to CUDA): 19.31 MiB',
  'PyTorch limit (set by user-supplied memory fraction)',
  '                        : 17179869184.00 GiB',
].join('\n');

const CPU_MESSAGE =
  "[enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 274877906944 bytes. Error code 12 (Cannot allocate memory)";

export function outOfMemoryFailure(
  device: 'cuda' | 'cpu',
): Pick<NodeFailure, 'exceptionType' | 'message' | 'tips'> {
  return device === 'cuda'
    ? { exceptionType: 'torch.OutOfMemoryError', message: CUDA_MESSAGE, tips: OUT_OF_MEMORY_TIPS }
    : { exceptionType: 'RuntimeError', message: CPU_MESSAGE };
}
