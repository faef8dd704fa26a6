#!/bin/sh
# Everything behind REPORT.md's tables, sequentially (2 shared cores). Logs in results/.
P="nice -n 10 /work/main/.venv/bin/python"
FULL=win,win3,date,sess_max,nb_max,tile0.45_max,k
# 1. the three protocols (+ STM variants of plain), LOCO-CV at 1000 words
$P cv.py harness --tag harness_1000 > results/harness_1000.log 2>&1
$P cv.py fresh --tag fresh_1000 > results/fresh_1000.log 2>&1
for stm in full none compact; do $P cv.py plain --stm $stm --tag plain_${stm}_1000 > results/plain_${stm}_1000.log 2>&1; done
$P cv.py harness --mean-windows --tag harness_1000_mean > results/harness_1000_mean.log 2>&1
$P cv.py fresh --mean-windows --tag fresh_1000_mean > results/fresh_1000_mean.log 2>&1
# 2. ablations (harness and fresh): which component brings what, each set LOCO-CV-fitted
for proto in harness fresh; do
  for ps in nb_max,sess_max win win3 win,win3 win,win3,k win,win3,date win,win3,date,k date tile0.45_max,sess_max,nb_max \
            $FULL,memseg_max $FULL,seg_keys $FULL,knn_mean; do
    $P cv.py $proto --params $ps >> results/ablation_$proto.log 2>&1
  done
done
