"""Scale benchmark for checkeval.metaeval on synthetic answers.

12 judges × 1,600 items (100 documents × 16 systems) × 120 yes/no questions (4 dimensions × 30).
Times, in one run:
  - checklist scores (yes-ratio per judge × item × dimension) from the 2.3 M answers,
  - summary-level Pearson/Spearman/Kendall with 1,000 bootstrap resamples of documents for every
    judge × dimension (48 correlation sets), with `checkeval.metaeval.level_correlations`,
  - Krippendorff's alpha (nominal, value domain {0, 1}) and Fleiss' kappa over all answers, per
    dimension, with `checkeval.metaeval.agreement_rows` (12 judges as one group),
and, for comparison, a straightforward loop: pandas groupby over documents + scipy per group,
resampling documents in a Python loop. The loop runs only LOOP_RESAMPLES resamples (it is slow);
per-resample times of both are reported, both measured in this run. The data are synthetic: the
numbers say how fast the analysis is, nothing about any judge.
The last line printed is one JSON object.
"""
import json, os, sys, time
import numpy as np, pandas as pd
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from checkeval.metaeval import level_correlations, agreement_rows

N_JUDGES, N_DOCS, N_SYS, N_DIMS, N_Q = 12, 100, 16, 4, 30
N_BOOT = int(os.environ.get('BENCH_N_BOOT', 1000))
LOOP_RESAMPLES = int(os.environ.get('BENCH_LOOP_RESAMPLES', 3))


def synth(seed=0):
    rng = np.random.default_rng(seed)
    n_items = N_DOCS * N_SYS
    quality = rng.normal(0, 1, (N_DIMS, n_items))
    human = np.clip(np.round(3 + quality + rng.normal(0, .7, quality.shape)), 1, 5)
    q_diff = rng.normal(0, 1, (N_DIMS, N_Q))
    judge_bias = rng.normal(0, .5, N_JUDGES)
    logits = (quality[None, :, :, None] - q_diff[None, :, None, :] + judge_bias[:, None, None, None]
              + rng.normal(0, 1, (N_JUDGES, N_DIMS, n_items, N_Q)))
    ans = (logits > 0).astype(np.float32)
    ans[rng.random(ans.shape) < 0.01] = np.nan          # 1 % parse failures
    return ans, human


def main():
    t_all = time.perf_counter()
    ans, human = synth()
    n_items = N_DOCS * N_SYS
    doc = np.repeat(np.arange(N_DOCS), N_SYS); sysid = np.tile(np.arange(N_SYS), N_DOCS)
    t_gen = time.perf_counter() - t_all

    # answers as records (what the analysis reads), 2.3 M rows
    t0 = time.perf_counter()
    J, D, I, Q = np.meshgrid(np.arange(N_JUDGES), np.arange(N_DIMS), np.arange(n_items), np.arange(N_Q), indexing='ij')
    answers = pd.DataFrame(dict(judge=pd.Categorical.from_codes(J.ravel(), [f'judge{j}' for j in range(N_JUDGES)]),
                                dimension=pd.Categorical.from_codes(D.ravel(), [f'dim{d}' for d in range(N_DIMS)]),
                                item_id=I.ravel(), question_id=Q.ravel(), value=ans.ravel()))
    t_frame = time.perf_counter() - t0

    # 1. checklist scores = yes-ratio over answered questions
    t0 = time.perf_counter()
    scores = answers.groupby(['judge', 'dimension', 'item_id'], observed=True).value.mean().to_numpy().reshape(N_JUDGES, N_DIMS, n_items)
    t_scores = time.perf_counter() - t0

    # 2. summary-level correlations with bootstrap CIs, our engine
    t0 = time.perf_counter()
    ours = []
    for j in range(N_JUDGES):
        for d in range(N_DIMS):
            ours.append(level_correlations(scores[j, d], human[d], doc, sysid, level='summary', n_boot=N_BOOT, seed=j * 10 + d))
    t_corr = time.perf_counter() - t0

    # 3. agreement over all answers
    t0 = time.perf_counter()
    ag = agreement_rows(answers, {'all': [f'judge{j}' for j in range(N_JUDGES)]}, unit='question', benchmark='synthetic', method='checkeval')
    t_agree = time.perf_counter() - t0
    total = t_scores + t_corr + t_agree

    # baseline: pandas groupby + scipy, resampling documents in a loop (one judge × dimension, then scaled per resample)
    t0 = time.perf_counter()
    df = pd.DataFrame(dict(doc=doc, score=scores[0, 0], human=human[0]))
    def summary_loop(frame):
        vals = {s: [] for s in ('pearson', 'spearman', 'kendall')}
        for _, g in frame.groupby('doc'):
            if g.score.nunique() < 2 or g.human.nunique() < 2: continue
            vals['pearson'].append(stats.pearsonr(g.score, g.human)[0])
            vals['spearman'].append(stats.spearmanr(g.score, g.human)[0])
            vals['kendall'].append(stats.kendalltau(g.score, g.human)[0])
        return {k: float(np.mean(v)) for k, v in vals.items()}
    point_loop = summary_loop(df)
    t_point_loop = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(LOOP_RESAMPLES):
        pick = rng.integers(0, N_DOCS, N_DOCS)
        rs = pd.concat([df[df.doc == k].assign(doc=i) for i, k in enumerate(pick)])
        summary_loop(rs)
    t_loop = time.perf_counter() - t0
    loop_per_resample = t_loop / LOOP_RESAMPLES
    ours_per_resample = t_corr / (N_JUDGES * N_DIMS * N_BOOT)

    # the two implementations agree on the point estimates
    o = ours[0].set_index('statistic').value
    max_diff = max(abs(o[s] - point_loop[s]) for s in point_loop)

    res = dict(
        judges=N_JUDGES, items=n_items, questions=N_DIMS * N_Q, answers=int(ans.size), bootstrap_resamples=N_BOOT,
        cpu_count=os.cpu_count(), load_avg_1min=os.getloadavg()[0],
        synth_s=round(t_gen, 2), answers_frame_s=round(t_frame, 2),
        scores_s=round(t_scores, 2), summary_correlations_with_bootstrap_s=round(t_corr, 2),
        agreement_alpha_kappa_s=round(t_agree, 2), analysis_total_s=round(total, 2), goal_under_60s=bool(total < 60),
        ours_per_judge_dimension_resample_ms=round(1000 * ours_per_resample, 4),
        loop_resamples_measured=LOOP_RESAMPLES, loop_per_judge_dimension_resample_ms=round(1000 * loop_per_resample, 1),
        loop_point_estimate_s=round(t_point_loop, 3),
        speedup_per_resample=round(loop_per_resample / ours_per_resample, 1),
        max_abs_diff_point_estimates_vs_scipy_loop=float(max_diff),
        alpha_nominal_mean=round(float(ag[(ag.statistic == 'krippendorff_alpha') & (ag.dimension != 'average')].value.mean()), 4),
        kappa_mean=round(float(ag[(ag.statistic == 'fleiss_kappa') & (ag.dimension != 'average')].value.mean()), 4),
        note='synthetic answers; the loop baseline ran loop_resamples_measured resamples for one judge x dimension')
    print(json.dumps(res))


if __name__ == '__main__':
    main()
