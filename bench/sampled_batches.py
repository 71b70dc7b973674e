"""Sampled requests (temperature above 0) on the `hf` backend with the built-in `smollm2` judge: one decoding batch vs one at a time.

RocketEval's MT-Bench rows need answers, and with the `smollm2` judge the judge writes them itself: `n_systems` samples
per question at temperature 1 (`checkeval.methods.rocketeval.method.generate_mt_bench_responses`). Sampled requests used to be
generated one after another with `model.generate` (each seeded by the request); now they are decoded in the same batches
as greedy ones, each row drawing from a generator of its own seeded the same way (`checkeval.judges.sampling`). A decoding
step reads every weight of the model from memory, so several rows per step cost far less than one step per row.

Baseline, in the same process on the same model weights and the same requests: "one at a time", one `model.generate`
(do_sample, the request's temperature, top_p 1) per request, the global generator seeded as the engine seeded it before.
"batched": `judge.generate(requests)` with the cache off. Both alternate, best of `--repeats`. Reported: seconds for
both, their ratio, new tokens, and how many replies are the same text. The last line is one JSON object.

    python bench/sampled_batches.py [--questions 4] [--samples 2] [--new 64] [--repeats 2] [--threads 2]
"""
from __future__ import annotations
import argparse, json, os, platform, sys, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def requests_for(n_questions:int, n_samples:int, new:int):
    "The first turn of the first `n_questions` MT-Bench questions, `n_samples` samples each at temperature 1 (as the method asks)."
    from checkeval.data import load_benchmark
    from checkeval.judges.types import JudgeRequest
    qs, seen = [], set()
    for q in load_benchmark('mt_bench'):
        if q.group_id in seen: continue
        seen.add(q.group_id); qs.append(q)
        if len(qs) == n_questions: break
    return [JudgeRequest(messages=[{'role': 'user', 'content': (q.meta.get('turns') or [q.source])[0]}], max_tokens=new,
                         temperature=1.0, seed=k, sample_index=k) for q in qs for k in range(n_samples)]


def one_at_a_time(judge, reqs):
    "One seeded `model.generate` per request (the engine's former sampled path), cut at the end-of-text token."
    import torch
    from checkeval.judges.sampling import row_generator
    model, tok = judge._loaded()
    out, new_tokens = [], 0
    for r in reqs:
        r = judge._prepare(r)                     # the request as the engine hands it on (its key names the model)
        ids = judge.chat_ids(r.messages)
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(row_generator(r).initial_seed())   # the global generator seeded as the request's own one
            g = model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                               max_new_tokens=judge._limit(r), do_sample=True, temperature=r.temperature, top_p=1.0, top_k=0,
                               eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
        new = g[0, len(ids):].tolist()
        if tok.eos_token_id in new: new = new[:new.index(tok.eos_token_id)]
        new_tokens += len(new)
        out.append(tok.decode(new, skip_special_tokens=True))
    return out, new_tokens


def batched(judge, reqs):
    out = judge.generate(reqs)
    bad = [r.error for r in out if r.error]
    if bad: raise RuntimeError(f'{len(bad)} requests failed, e.g. {bad[0]}')
    return [r.text for r in out], sum(r.completion_tokens or 0 for r in out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--questions', type=int, default=4)
    ap.add_argument('--samples', type=int, default=2, help='samples per question (the method: n_systems)')
    ap.add_argument('--new', type=int, default=64, help='new tokens per request')
    ap.add_argument('--repeats', type=int, default=2)
    ap.add_argument('--threads', type=int, default=2)
    args = ap.parse_args(argv)
    import torch
    torch.set_num_threads(args.threads)
    from checkeval.judges import get_judge
    judge = get_judge('smollm2', cache=False, progress=False)
    judge.num_threads = args.threads
    reqs = requests_for(args.questions, args.samples, args.new)
    batched(judge, reqs[:1]); one_at_a_time(judge, reqs[:1])          # load the weights, warm up
    best, texts, tokens = {}, {}, {}
    for _ in range(max(1, args.repeats)):
        for name, f in (('one_at_a_time', one_at_a_time), ('batched', batched)):
            t0 = time.perf_counter()
            texts[name], tokens[name] = f(judge, reqs)
            best[name] = min(best.get(name, float('inf')), time.perf_counter() - t0)
    same = sum(a == b for a, b in zip(texts['one_at_a_time'], texts['batched']))
    res = dict(bench='sampled_batches', model=judge.model, requests=len(reqs), new_tokens_per_request=args.new,
               threads=args.threads, seconds={k: round(v, 2) for k, v in best.items()},
               ratio=round(best['one_at_a_time']/best['batched'], 2), new_tokens=tokens, same_text=f'{same}/{len(reqs)}',
               machine=f'{platform.machine()}, {os.cpu_count()} cpus')
    print(f"one at a time {best['one_at_a_time']:.1f} s, batched {best['batched']:.1f} s ({res['ratio']}x); {same} of {len(reqs)} texts the same")
    print(json.dumps(res))


if __name__ == '__main__':
    main()
