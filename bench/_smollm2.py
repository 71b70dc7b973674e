"""What the benchmarks that run the built-in `smollm2` judge on SummEval share: the model checked installed, torch on one core,
and the sample of summaries they read."""
from __future__ import annotations


def summeval_sample(n:int):
    "SummEval's first `n` summaries (sample: whole documents, seed 0), once `smollm2` is known to be installed; torch on one thread."
    import torch
    from checkeval.data import load_benchmark
    from checkeval.judges.builtin import ModelFileError, smollm2_path
    from checkeval.runs import select_items
    try: smollm2_path()
    except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
    torch.set_num_threads(1)
    return select_items(load_benchmark('summeval'), n, 'groups', 0)


CHECKEVAL_FORMS = [('p_yes', {'granularity': 'question', 'answer': 'choices'}), ('grouped', {})]


def checkeval_forms(judge, items, root, forms=CHECKEVAL_FORMS):
    """Answers (form, item, question, reply, value, P(yes)) of CheckEval's `forms` (its P(yes) form, one question per request held
    to yes/no, and its grouped form, replies held to a JSON schema) by `judge` on `items` of SummEval, coherence, and the seconds they took."""
    import time, warnings
    from checkeval.runs import evaluate
    answers, t0 = [], time.perf_counter()
    for form, options in forms:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _, res = evaluate('checkeval', 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root/form, options=options)
        answers += [(form, a.item_id, a.question_id, a.raw_text, a.value, a.p_yes) for a in res.answers]
    return answers, time.perf_counter() - t0


def bench_args(doc:str, argv=None, items:int=2):
    "The arguments every smollm2 benchmark takes: `--items` (SummEval summaries) and `--repeats` (best of)."
    import argparse
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    ap.add_argument('--items', type=int, default=items)
    ap.add_argument('--repeats', type=int, default=1)
    return ap.parse_args(argv)


def smollm2_facts() -> dict:
    "What a smollm2 benchmark's JSON line says about where it ran."
    import platform, torch
    return dict(backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', torch=torch.__version__,
                threads=torch.get_num_threads(), python=platform.python_version())
