"""The summary-level ROUGE-L's LCS: `checkeval.metaeval.lexical.lcs_indices` (the table's rows as bit vectors) against rouge-score's
`lcs_ind` (the table as lists of lists), the baseline, in one process on the same inputs.

Two measures: the LCS calls alone over the sentence pairs of SummEval's first `--items` summaries and their 11 references
(every index list compared), and the ROUGE-1/2/L scores of those summaries through `lexical_scores` (one process, the
memoised LCS cleared between modes; every score compared). Best of `--repeats`. The last line is one JSON object.

    python bench/lexical_lcs.py [--items 400] [--repeats 1]
"""
from __future__ import annotations
import argparse, json, math, platform, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=400)
    ap.add_argument('--repeats', type=int, default=1)
    args = ap.parse_args(argv)
    from rouge_score import rouge_scorer as rs
    import checkeval.metaeval.lexical as lx
    from checkeval.data import load_benchmark
    items = load_benchmark('summeval')[:args.items]
    outs, refs = [it.output for it in items], lx.benchmark_references(items)
    pairs = [(r, c) for o, rr in zip(outs, refs) for ref in rr for r in (lx._tokens(x) for x in lx.split_sentences(ref))
             for c in (lx._tokens(x) for x in lx.split_sentences(o)) if c]
    baseline = lambda ref, can: tuple(rs.lcs_ind(list(ref), list(can)))
    modes, best, res = {'rouge_score': baseline, 'bit_vectors': lx.lcs_indices}, {}, {}
    for _ in range(max(1, args.repeats)):
        for mode, fn in modes.items():
            t = time.perf_counter(); res[mode] = [fn(r, c) for r, c in pairs]
            best[mode] = min(best.get(mode, math.inf), time.perf_counter() - t)
    scores, best_scores, keep = {}, {}, lx.lcs_indices
    try:
        for _ in range(max(1, args.repeats)):
            for mode, fn in modes.items():
                lx.lcs_indices = fn; lx._lcs_ind.cache_clear()
                t = time.perf_counter(); scores[mode] = lx.lexical_scores(outs, refs, ['rouge1', 'rouge2', 'rougeL'], n_jobs=1)
                best_scores[mode] = min(best_scores.get(mode, math.inf), time.perf_counter() - t)
    finally: lx.lcs_indices = keep; lx._lcs_ind.cache_clear()
    a, b = scores['rouge_score'], scores['bit_vectors']
    out = dict(bench='lexical_lcs', items=len(items), sentence_pairs=len(pairs),
               same_indices=sum(x == y for x, y in zip(res['rouge_score'], res['bit_vectors'])),
               lcs_seconds_rouge_score=round(best['rouge_score'], 3), lcs_seconds_bit_vectors=round(best['bit_vectors'], 3),
               lcs_ratio=round(best['rouge_score'] / best['bit_vectors'], 2),
               scores_same=bool(a.equals(b)), rouge_seconds_rouge_score=round(best_scores['rouge_score'], 2),
               rouge_seconds_bit_vectors=round(best_scores['bit_vectors'], 2),
               rouge_ratio=round(best_scores['rouge_score'] / best_scores['bit_vectors'], 2), python=platform.python_version(),
               goal='the same LCS indices and ROUGE scores, quicker')
    out['goal_met'] = bool(out['same_indices'] == len(pairs) and out['scores_same'] and out['lcs_ratio'] > 1)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
