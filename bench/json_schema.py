"""Replies held to a JSON schema in the `hf` backend (xgrammar) against free generation, with the built-in `smollm2`.

Workload: Check-Eval's evaluation stage on SummEval items, one request per item asking the whole checklist (a fixed
checklist of `--questions` coherence questions, project wording), the reply an `{"answers": [{"id", "answer"}...]}`
object (`checkeval.methods.keypoint.answers_schema(n)`: exactly n answers, ids 1..n, yes/no).

Both runs go through the same engine in the same process on the same model weights, cache off, after one untimed
warm-up request each:
"held": the judge with `supports_json_schema=True` (the request carries the schema; every step masked by xgrammar);
"free": the same judge without it (the request has no schema: the model's own text, the line form of the template).

Reported: seconds, generated tokens and milliseconds per generated token of each run (the replies differ, so the
per-token cost is what compares the decoding), the time spent computing masks (measured around the backend's
`_allow`), and how many replies parse (`parse_checklist_answers`; the held replies are also validated against the
schema with `jsonschema`). The last line is one JSON object.

    python bench/json_schema.py [--items 8] [--questions 8]
"""
from __future__ import annotations
import argparse, json, os, platform, sys, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTIONS = ['Does the summary stay on one topic from start to end?', 'Does each sentence follow from the one before it?',
             'Is the order of the facts easy to follow?', 'Does the summary avoid repeating the same point?',
             'Are the people and things it mentions introduced before they are referred to?',
             'Does the summary avoid sudden jumps between unrelated facts?', 'Does the last sentence close the summary?',
             'Could a reader retell the summary after one reading?', 'Does every sentence add something new?',
             'Are the links between sentences clear (because, then, however)?']


def run(judge, reqs, n):
    "Answer `reqs` with `judge`, timing the whole run and the mask computation; parse each reply."
    from checkeval.methods.keypoint import parse_checklist_answers
    spent, allow = [0.0], judge._allow
    def timed_allow(*a, **k):
        t = time.perf_counter(); out = allow(*a, **k); spent[0] += time.perf_counter() - t; return out
    judge._allow = timed_allow
    try:
        t0 = time.perf_counter(); resps = judge.generate(reqs); dt = time.perf_counter() - t0
    finally: del judge._allow
    tokens = sum(r.completion_tokens or 0 for r in resps)
    parsed = [sum(v is not None for v, _ in parse_checklist_answers(r.text, n)) for r in resps]
    return resps, dict(seconds=round(dt, 2), new_tokens=tokens, ms_per_token=round(1000*dt/max(tokens, 1), 2),
                       mask_seconds=round(spent[0], 3), answers_parsed=sum(parsed), answers_asked=n*len(reqs),
                       cut_by_token_cap=sum(r.finish_reason == 'length' for r in resps))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=8)
    ap.add_argument('--questions', type=int, default=8)
    ap.add_argument('--max-tokens', type=int, default=256)
    a = ap.parse_args(argv)
    import jsonschema, torch
    from checkeval.data import load_benchmark
    from checkeval.judges import get_judge
    from checkeval.methods.keypoint import answers_schema, evaluation_request
    items, qs = load_benchmark('summeval')[:a.items], QUESTIONS[:a.questions]
    held = get_judge('smollm2', cache=False, progress=False, supports_json_schema=True)
    free = get_judge('smollm2', cache=False, progress=False, supports_json_schema=False)
    held._loaded()
    warm = evaluation_request(free, 'coherence', qs[:1], items[0].output, max_tokens=4)   # first forwards pay one-off costs
    free.generate([warm]); held.generate([evaluation_request(held, 'coherence', qs[:1], items[0].output, max_tokens=4)])
    res = dict(bench='json_schema', judge=held.name, model=held.model, items=len(items), questions=len(qs), max_tokens=a.max_tokens,
               torch_threads=torch.get_num_threads(), cpu_count=os.cpu_count(), python=platform.python_version(), torch=torch.__version__)
    ask = lambda j: [evaluation_request(j, 'coherence', qs, it.output, max_tokens=a.max_tokens) for it in items]
    free_resps, res['free'] = run(free, ask(free), len(qs))
    held_resps, res['held'] = run(held, ask(held), len(qs))
    schema = answers_schema('en', len(qs))
    valid = 0
    for r in held_resps:
        try: jsonschema.validate(json.loads(r.text), schema); valid += 1
        except (ValueError, jsonschema.ValidationError): pass
    res['held']['valid_instances'] = valid
    res['ms_per_token_ratio'] = round(res['held']['ms_per_token']/max(res['free']['ms_per_token'], 1e-9), 3)
    res['mask_share'] = round(res['held']['mask_seconds']/max(res['held']['seconds'], 1e-9), 3)
    print(json.dumps(res))


if __name__ == '__main__':
    main()
