"""RocketEval grading on the `hf` backend: shared-prefix reuse vs one full forward per checklist item.

A randomly initialised Llama of realistic shape (4 layers, hidden 512, 8 heads, 32k word-level
vocabulary, built locally; nothing is downloaded) grades 10 checklist items for each of 50
responses with RocketEval's own grading prompt (`checkeval/prompts/rocketeval/grade.yaml`, one
request per item, constrained to Yes/No, top log-probabilities). Every response answers a
different query and is ~600 words long, so the ten requests about one response share a prefix of
~600+ tokens and differ only in the question at the end.

Both modes run in the same process on the same requests through `checkeval.judges.HFJudge`
(cache off): `prefix_reuse=True` computes each shared prefix once and expands its key/value cache
over the items; `prefix_reuse=False` runs one full forward per item. Reported: items/s for both,
their `ratio`, and the largest absolute difference of the normalised scores P(Yes)/(P(Yes)+P(No))
and of the Yes/No probabilities between the two modes. The last line is one JSON object.

    python bench/prefix_reuse.py [--responses 50] [--items 10] [--words 600] [--repeats 2] [--device cpu]

The engine's grouping runs with its defaults unless `--min-prefix-tokens` / `--prefix-fraction` are given.
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SPECIAL = ['<pad>', '<unk>', '<s>', '</s>', '<|system|>', '<|user|>', '<|assistant|>', '<|end|>']
ANSWERS = ['Yes', 'No', 'yes', 'no', 'YES', 'NO']
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
            "{% if add_generation_prompt %}<|assistant|> {% endif %}")


def build_model(path:Path, vocab_size:int=32000, seed:int=0) -> Path:
    "A random Llama (4 layers, hidden 512, 8 heads) and a word-level tokenizer with a chat template, saved to `path`."
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    # the grading template's own words get ids too, so the prompt is not mostly <unk>
    from checkeval.prompts import find_template
    tpl_words = sorted(set(find_template('rocketeval/grade').read_text().replace('\n', ' ').split()))
    words = list(dict.fromkeys(SPECIAL + ANSWERS + [w for w in tpl_words if w.isalpha()] + list('.,;:!?\'"()[]{}-_/<>|')))
    words += [f'w{i}' for i in range(vocab_size - len(words))]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token='<unk>'))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation('isolated')])
    tok.add_special_tokens(SPECIAL)
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=TEMPLATE, bos_token='<s>', eos_token='<|end|>',
                                     unk_token='<unk>', pad_token='<pad>', model_max_length=4096)
    cfg = LlamaConfig(vocab_size=len(words), hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=8, max_position_embeddings=4096, bos_token_id=hf_tok.bos_token_id,
                      eos_token_id=hf_tok.eos_token_id, pad_token_id=hf_tok.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).eval()
    model.save_pretrained(path); hf_tok.save_pretrained(path)
    return path


def make_workload(n_responses:int, n_items:int, n_words:int, vocab_size:int, seed:int=0):
    "Response items (one query each) and a checklist of `n_items` questions per query, from random vocabulary words."
    import random
    from checkeval.core import Item
    from checkeval.methods.rocketeval.method import make_checklist
    rng = random.Random(seed)
    word = lambda: f'w{rng.randrange(vocab_size - 200)}'
    text = lambda n: ' '.join(word() for _ in range(n))
    items, checklists = [], {}
    for r in range(n_responses):
        iid = f'q{r}'
        items.append(Item(benchmark='bench', item_id=f'{iid}:m', group_id=iid, system_id='m', source=text(30), output=text(n_words)))
        checklists[iid] = make_checklist(iid, [f'Does {text(12)}?' for _ in range(n_items)], benchmark='bench')
    return items, checklists


def requests_for(items, checklists):
    "RocketEval's independent grading requests: one per (response, checklist item), as `grade_items` builds them."
    from checkeval.methods.rocketeval.method import grading_messages, grading_request, instance_of
    return [grading_request(grading_messages(instance_of(it), it.output, q.text), top_logprobs=5)
            for it in items for q in checklists[it.group_id].questions]


def grade(judge, reqs):
    "Send all requests in one `generate` call; returns (normalised score, P(Yes), P(No)) per request and seconds."
    from checkeval.methods.rocketeval.method import normalized_score
    t0 = time.perf_counter()
    resps = judge.generate(reqs)
    dt = time.perf_counter() - t0
    bad = [r.error for r in resps if r.error]
    if bad: raise RuntimeError(f'{len(bad)} requests failed, e.g. {bad[0]}')
    out = []
    for r in resps:
        tl = r.top_logprobs[0]
        out.append((normalized_score(tl)[0], math.exp(tl['Yes']), math.exp(tl['No'])))
    return out, dt


def model_options(ap):
    "The options of every bench on this random model: --vocab, --repeats, --threads (with `set_threads`)."
    ap.add_argument('--vocab', type=int, default=32000)
    ap.add_argument('--repeats', type=int, default=2, help='timed runs per mode (alternating); the best is reported')
    ap.add_argument('--threads', type=int, default=None)
    return ap


def set_threads(args):
    "torch, with `--threads` set when given."
    import torch
    if args.threads: torch.set_num_threads(args.threads)
    return torch


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--responses', type=int, default=50)
    ap.add_argument('--items', type=int, default=10)
    ap.add_argument('--words', type=int, default=600)
    model_options(ap).add_argument('--device', default='cpu')
    ap.add_argument('--min-prefix-tokens', type=int, default=None, help="HFJudge's min_prefix_tokens (default: the engine's)")
    ap.add_argument('--prefix-fraction', type=float, default=None, help="HFJudge's prefix_fraction (default: the engine's)")
    args = ap.parse_args(argv)
    torch = set_threads(args)
    from checkeval.judges import HFJudge
    with tempfile.TemporaryDirectory(prefix='prefix-bench-') as tmp:
        path = build_model(Path(tmp)/'model', args.vocab)
        items, checklists = make_workload(args.responses, args.items, args.words, args.vocab)
        # requests about different responses share the chat header and the prompt's opening sentences (~40 tokens);
        # the engine's default grouping (prefix at least half of the prompts) keeps them apart, so no option is needed
        opts = {k: v for k, v in (('min_prefix_tokens', args.min_prefix_tokens), ('prefix_fraction', args.prefix_fraction)) if v is not None}
        judges = {mode: HFJudge(f'bench-{mode}', model_path=path, device=args.device, cache=False, progress=False,
                                prefix_reuse=(mode == 'reuse'), **opts) for mode in ('reuse', 'full')}
        reqs = requests_for(items, checklists)
        tokens = [judges['full'].count_tokens(r) for r in reqs]
        for j in judges.values(): grade(j, reqs[:args.items])          # load weights, warm up
        best, scores = {}, {}
        for _ in range(max(1, args.repeats)):
            for mode in ('full', 'reuse'):
                judges[mode].reset_prefix_stats()
                scores[mode], dt = grade(judges[mode], reqs)
                best[mode] = min(best.get(mode, math.inf), dt)
        n = len(reqs)
        pairs = list(zip(scores['reuse'], scores['full']))
        d_norm = max(abs(x[0] - y[0]) for x, y in pairs)
        d_prob = max(max(abs(x[1] - y[1]), abs(x[2] - y[2])) for x, y in pairs)
        shared = [min(tokens[i:i + args.items]) for i in range(0, n, args.items)]
        res = dict(bench='prefix_reuse', backend='hf', device=args.device, model='random Llama: 4 layers, hidden 512, 8 heads, '
                   f'vocab {args.vocab}', responses=args.responses, items_per_response=args.items, requests=n,
                   prompt_tokens_per_request=round(sum(tokens) / n, 1), max_prompt_tokens=max(tokens),
                   seconds_full=round(best['full'], 3), seconds_reuse=round(best['reuse'], 3),
                   items_per_s_full=round(n / best['full'], 2), items_per_s_reuse=round(n / best['reuse'], 2),
                   ratio=round(best['full'] / best['reuse'], 2), max_abs_diff_normalized_p=d_norm, max_abs_diff_yes_no_p=d_prob,
                   prefix_groups=judges['reuse'].prefix_stats['groups'], prefix_tokens_saved=judges['reuse'].prefix_stats['prefix_tokens_saved'],
                   min_prefix_tokens=judges['reuse'].min_prefix_tokens, prefix_fraction=judges['reuse'].prefix_fraction, torch=torch.__version__, threads=torch.get_num_threads(),
                   python=platform.python_version(), goal='ratio >= 3 and max_abs_diff <= 1e-4')
        res['goal_met'] = bool(res['ratio'] >= 3 and max(d_norm, d_prob) <= 1e-4)
        print(json.dumps(res))


if __name__ == '__main__':
    main()
