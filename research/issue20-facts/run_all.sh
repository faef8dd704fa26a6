#!/bin/sh
# Everything in REPORT.md, in order (each step < 10 minutes on 2 shared cores; embeddings cached in emb_cache.*)
set -e
PY="nice -n 10 /work/main/.venv/bin/python"
$PY baseline.py plain          # today's LPM, plain protocol (reproduces issue 20's figures)
$PY baseline.py harness        # today's LPM, harness protocol
$PY trivial.py                 # how lenient cosine >= 0.6 with names is
$PY trivial2.py                # ... and name-blind
$PY bounds.py                  # coverage reachable from every speaker_a turn / sentence
$PY bounds_blind.py            # oracle bounds, name-blind
$PY table.py                   # candidate table (features, labels)
$PY learn.py                   # learned gate: held-out AUC
rm -f out/gates.json
$PY gates.py A1 A2 A2b A2c A3 A3fifo A5 A5u A5k A5both A5s        # rule variants (no fitting)
$PY gates.py A4 A6 A6both A6k                                   # learned gate, LOCO
$PY gates.py A4u A6u A6ku A6two                                 # learned gate, LOCO (reference runs)
$PY gates.py A7                                                 # MMR eviction (did not help)
$PY dump_facts.py              # KBs for the read-path experiments
$PY e2e.py rule plain; $PY e2e.py learned plain; $PY e2e.py rule harness; $PY e2e.py learned harness
$PY retrieval.py today,rule_both,learned_known 1000
$PY retrieval.py today,rule_both 500,2000 P0,P1,P4a
$PY retrieval.py today,rule_both,learned_known 1000 P0,P1,P1n,P4a,P4an,P4bn > out/retrieval_blind.log  # name-blind fact relevance
$PY e2e_read.py proto; $PY e2e_read.py today
