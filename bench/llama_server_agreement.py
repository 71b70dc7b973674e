"""How often llama.cpp's own `llama-server` (judges-file entry `llamacpp-smollm2`, through the `openai` backend) gives
the answers the in-process `hf` backend (`smollm2`) gives, on the same items: the same GGUF file of SmolLM2-135M-Instruct,
the same method requests, greedy on both sides. The hf backend runs the weights dequantised to fp32 with its own
constrained decoding; llama.cpp runs the Q4_1 weights as they are, with its grammar sampler: where they differ is what
a researcher who swaps one for the other would see.

Per method form (the methods of tests/test_llama_server.py), on the `--items` shortest summaries of SummEval's shortest
article, coherence: answers, parse rate of each judge, and over the answers both judges recorded for the same key (item,
sub-dimension, question): the share with the same reply text, the same parsed value (both unparsed counts as the same),
and the mean and largest |P(yes) difference| where both have one. Forms whose later requests are built from earlier
replies (SEAL's units, Check-Eval's checklist) are compared on the keys both runs reached; their prompts agree only as
far as those replies did. The last line is one JSON object.

    CHECKEVAL_LLAMA_SERVER=data/cache/llama.cpp/<version>/bin/llama-server python bench/llama_server_agreement.py [--items 2]
(without the variable, the build `make test-servers` caches is used where there is one; else the JSON says why nothing ran)
"""
from __future__ import annotations
import argparse, json, os, platform, subprocess, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.llama_server import BINARY_ENV, JUDGE, URL_ENV, binary, cached_binary, serve, version

FORMS = [('checkeval', 'p_yes', {'granularity': 'question', 'answer': 'choices'}), ('checkeval', 'grouped', {}),
         ('geval', 'default', {}), ('likert', 'default', {}), ('seeval', 'default', {'max_tokens': 60}),
         ('rocketeval', 'fixed', {'checklists': 'fixed'}),
         ('seal', 'default', {'max_tokens': 60}), ('seal', 'per_unit', {'verdicts': 'per_unit', 'max_tokens': 60}),
         ('keypoint', 'default', {'max_tokens': 250}), ('keypoint', 'per_question', {'answers': 'per_question', 'max_tokens': 250}),
         ('interacteval', 'default', {'sample_unit': 'items'}), ('interacteval', 'per_question', {'answers': 'per_question', 'sample_unit': 'items'})]


def shortest_items(n:int):
    "The `n` shortest summaries of SummEval's shortest article (what the method tests read)."
    from checkeval.data import load_benchmark
    items = load_benchmark('summeval')
    src = min(items, key=lambda i: (len(i.source or ''), i.item_id)).source
    return sorted((i for i in items if i.source == src), key=lambda i: (len(i.output), i.item_id))[:n]


def run(method, options, judge, items, root):
    from checkeval.runs import evaluate
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t0 = time.perf_counter()
        _, res = evaluate(method, 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root, options=options)
    return res.answers, time.perf_counter() - t0


def compare(hf, api) -> dict:
    "Parse rates of both answer lists and their agreement over the keys both have."
    key = lambda a: (a.item_id, a.dimension, a.sub_dimension, a.question_id)
    H, A = {key(a): a for a in hf}, {key(a): a for a in api}
    both = sorted(set(H) & set(A), key=str)
    rate = lambda xs: round(sum(a.value is not None for a in xs) / len(xs), 4) if xs else None
    d = [abs(H[k].p_yes - A[k].p_yes) for k in both if H[k].p_yes is not None and A[k].p_yes is not None]
    share = lambda f: round(sum(map(f, both)) / len(both), 4) if both else None
    return dict(n_hf=len(hf), n_llamacpp=len(api), parse_hf=rate(hf), parse_llamacpp=rate(api), n_paired=len(both),
                same_text=share(lambda k: H[k].raw_text == A[k].raw_text), same_value=share(lambda k: H[k].value == A[k].value),
                n_p_yes=len(d), p_yes_mean_abs_diff=round(sum(d) / len(d), 4) if d else None, p_yes_max_abs_diff=round(max(d), 4) if d else None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=2)
    ap.add_argument('--forms', default='', help='comma-separated method:form names (default: all)')
    ap.add_argument('--threads', type=int, default=2, help="llama-server's threads (torch runs on one)")
    a = ap.parse_args(argv)
    exe, why = binary()
    if exe is None and cached_binary().exists(): exe = cached_binary()
    if exe is None:
        print(json.dumps(dict(bench='llama_server_agreement', skipped=why))); return
    import torch
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import smollm2_gguf
    torch.set_num_threads(1)
    forms = [f for f in FORMS if not a.forms or f'{f[0]}:{f[1]}' in a.forms.split(',')]
    items, out = shortest_items(a.items), []
    server_version = subprocess.run([str(exe), '--version'], capture_output=True, text=True).stderr.strip().splitlines()
    with tempfile.TemporaryDirectory() as tmp, serve(exe, smollm2_gguf(), threads=a.threads, log=Path(tmp) / 'server.log') as url:
        os.environ[URL_ENV] = url
        hf = get_judge('smollm2', cache=Path(tmp) / 'hf.sqlite', progress=False)
        api = get_judge(JUDGE, cache=Path(tmp) / 'api.sqlite', progress=False)
        for method, form, options in forms:
            h, th = run(method, options, hf, items, Path(tmp) / 'hf' / method / form)
            l, tl = run(method, options, api, items, Path(tmp) / 'api' / method / form)
            row = dict(method=method, form=form, **compare(h, l), seconds_hf=round(th, 1), seconds_llamacpp=round(tl, 1))
            bad = sorted({x.status for x in l if x.value is None})[:3]
            print(json.dumps(row), '| llama.cpp unparsed:', bad, flush=True)
            out.append(row)
    print(json.dumps(dict(bench='llama_server_agreement', judges=['smollm2', JUDGE], benchmark='summeval', dimension='coherence',
                          items=len(items), llama_cpp_python=version(), server_version=server_version, binary=str(exe),
                          python=platform.python_version(), forms=out)))


if __name__ == '__main__':
    main()
