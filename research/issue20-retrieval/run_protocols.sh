#!/bin/sh
# LOCO-CV of the structured ranking for each protocol at 1000 words (see cv.py); logs in results/
P=/work/main/.venv/bin/python
nice -n 10 $P cv.py fresh --tag fresh_1000 > results/fresh_1000.log 2>&1
nice -n 10 $P cv.py plain --stm full --tag plain_full_1000 > results/plain_full_1000.log 2>&1
nice -n 10 $P cv.py plain --stm none --tag plain_none_1000 > results/plain_none_1000.log 2>&1
nice -n 10 $P cv.py plain --stm compact --tag plain_compact_1000 > results/plain_compact_1000.log 2>&1
