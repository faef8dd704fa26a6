#!/bin/sh
# The recommended feature set (win,win3,date,k) under every protocol, turn packing on top, curves, latency.
P="nice -n 10 /work/main/.venv/bin/python"
REC=win,win3,date,k
$P cv.py harness --params $REC --tag rec_harness > results/rec_harness.log 2>&1
$P cv.py fresh --params $REC --tag rec_fresh > results/rec_fresh.log 2>&1
for stm in full none compact; do $P cv.py plain --stm $stm --params $REC --tag rec_plain_$stm > results/rec_plain_$stm.log 2>&1; done
$P cv.py harness --params $REC --mean-windows --tag rec_harness_mean > results/rec_harness_mean.log 2>&1
$P cv.py fresh --params $REC --mean-windows --tag rec_fresh_mean > results/rec_fresh_mean.log 2>&1
$P turns.py harness --from rec_harness > results/rec_turns_harness.log 2>&1
$P turns.py fresh --from rec_fresh > results/rec_turns_fresh.log 2>&1
for stm in none compact; do $P turns.py plain --stm $stm --from rec_plain_$stm > results/rec_turns_plain_$stm.log 2>&1; done
$P latency.py > results/latency.log 2>&1
$P curve.py harness > results/curve_harness.log 2>&1
$P curve.py fresh > results/curve_fresh.log 2>&1
$P curve.py plain --stm compact > results/curve_plain_compact.log 2>&1
$P curve.py plain --stm none > results/curve_plain_none.log 2>&1
