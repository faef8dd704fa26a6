"""Reproduce issue 20's dev figures with the package's own harness (harness protocol).

memoryos default vs flat hybrid/BM25/dense <=1000 words, categories 1-4, 5 dev conversations.
Writes repro_outcomes.json (every question outcome) and prints the summary table.
"""
import json, sys, time
from langchain_memoryos.evaluation.benchmark import run_locomo, MemorySystem
from langchain_memoryos.evaluation.baselines import Baseline
from langchain_memoryos.evaluation.report import markdown_table
from langchain_memoryos.config import MemoryOSConfig

t = time.time()
run = run_locomo("/work/shared/data/locomo_dev.json",
                 systems=[MemorySystem("memoryos", MemoryOSConfig())],
                 baselines=[Baseline("hybrid", words=1000), Baseline("bm25", words=1000), Baseline("dense", words=1000),
                            Baseline("hybrid", 20)],
                 categories=(1, 2, 3, 4), progress=False)
print(markdown_table(run.summaries))
print("seconds", round(time.time() - t))
json.dump([o.as_dict() for o in run.outcomes], open("repro_outcomes.json", "w"))
