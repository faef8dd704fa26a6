"""Engine benchmark: ingest throughput and retrieval latency of ``MemoryOS``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_engine.py            # full run (20,000-page user, 12-20 min)
    .venv/bin/python benchmarks/bench_engine.py --quick    # smoke test (2,000-page user)
    .venv/bin/python benchmarks/bench_engine.py --json bench.json --profile

Everything goes through the public facade (``MemoryOS.add_turn``,
``MemoryOS.retrieve``, ``MemoryOS.stats``) on the offline default: MiniLM
embeddings and the ``HeuristicController``. The dialogue is synthetic and
deterministic (seeded ``random``): ~130 topics, each with its own vocabulary,
so that pages cluster into at most ~200 segments and heat eviction does not
throw pages away. See ``benchmarks/README.md`` for how to read the output.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from langchain_memoryos import DialoguePage, MemoryOS, __version__
from langchain_memoryos.embeddings import encode_texts
from langchain_memoryos.retrieval.keywords import extract_keywords

TARGET_INGEST_TPS = 40.0
TARGET_P95_MS_LARGE = 50.0
STM_CAPACITY = 7  # MemoryOSConfig().stm_capacity, the paper's default
SMALL_PAGES = 300
LARGE_PAGES = 20_000
QUICK_LARGE_PAGES = 2_000
PROGRESS_EVERY = 2_000
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SEED = 20240611
#: The cores this process may use (the bound of a bulk write's speed-up, see measure_write_ratios).
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
T0 = dt.datetime(2024, 1, 1, 8, 0, tzinfo=dt.UTC)

# --------------------------------------------------------------------------- #
# Synthetic dialogue
# --------------------------------------------------------------------------- #

# "topic | its vocabulary" (each topic gets its own words so its pages cluster)
_TOPIC_SPEC = """
hiking in the Rockies | trail, summit, switchbacks, backpack, elevation, campsite, boots, ridge, trailhead,
    altitude
sourdough baking | starter, levain, crumb, hydration, proofing, bulk fermentation, scoring, banneton,
    dutch oven, flour
learning Rust | borrow checker, lifetimes, cargo, traits, ownership, crates, enums, pattern matching,
    async runtime, clippy
marathon training | long run, tempo, intervals, taper, pace, mileage, shoes, hydration belt, splits,
    recovery week
vegetable gardening | tomatoes, raised beds, compost, seedlings, mulch, zucchini, watering, soil, trellis,
    aphids
playing jazz piano | voicings, chord changes, walking bass, improvisation, swing feel, ii-V-I, comping, scales,
    standards, left hand
home espresso | grinder, portafilter, tamping, crema, extraction, shots, milk frothing, beans, dose, puck
chess openings | Sicilian, castling, gambit, pawn structure, endgame, tactics, Ruy Lopez, tempo, blunder,
    rating
woodworking | dovetails, chisel, workbench, hand plane, oak, joinery, sanding, table saw, clamps, finish
learning Japanese | kanji, hiragana, katakana, particles, keigo, vocabulary flashcards, listening practice,
    grammar, JLPT, pitch accent
rock climbing | bouldering, belay, crimps, harness, chalk, route grade, lead climbing, carabiner, overhang,
    climbing shoes
birdwatching | binoculars, warblers, field guide, migration, feeders, herons, spotting scope, birdsong,
    raptors, wetlands
astrophotography | telescope, tracking mount, long exposure, Milky Way, light pollution, stacking, nebula,
    star trails, dark sky, lens
beekeeping | hive, queen, honeycomb, smoker, varroa mites, frames, nectar, swarm, brood, beeswax
home renovation | drywall, contractor, tiles, permits, plumbing, wiring, kitchen cabinets, paint, demolition,
    budget overrun
photography with film | 35mm, darkroom, developer, negatives, exposure, Portra, rangefinder, grain, enlarger,
    contact sheet
learning guitar | fretboard, barre chords, strumming, calluses, tuning, capo, fingerpicking, amp, tablature,
    pentatonic
cycling commutes | bike lane, panniers, helmet, gears, flat tire, rain jacket, saddle, commute route, lights,
    chain grease
training a puppy | leash, treats, crate, house training, recall, sit command, chewing, puppy class, walks,
    barking
Python data analysis | pandas, dataframes, notebooks, matplotlib, groupby, CSV files, numpy arrays, plots,
    missing values, regression
knitting | yarn, needles, stitches, purl, sweater, gauge, cables, wool, pattern, cast on
saving for a house | down payment, mortgage, savings account, interest rate, budget, credit score, realtor,
    closing costs, neighborhood, pre-approval
scuba diving | regulator, buoyancy, dive computer, reef, wetsuit, decompression, dive buddy, tank, visibility,
    certification
learning to swim | freestyle, breathing, kickboard, laps, goggles, pool, backstroke, flip turn, swim coach,
    lane
Italian cooking | pasta, risotto, parmesan, olive oil, tomato sauce, basil, carbonara, gnocchi, garlic,
    al dente
fantasy novels | dragons, worldbuilding, magic system, series, chapters, villain, quest, map, paperback,
    trilogy
board game nights | Catan, dice, meeple, expansion, rulebook, strategy, game night, cards, victory points,
    co-op games
aquarium keeping | fish tank, filter, water parameters, cichlids, aquatic plants, nitrate, heater, substrate,
    guppies, water change
running a small bakery | storefront, croissants, wholesale orders, ovens, morning shift, pastry case,
    suppliers, staff, margins, customers
learning calculus | derivatives, integrals, limits, chain rule, textbook, problem sets, series, exam, tutor,
    epsilon
yoga practice | downward dog, vinyasa, mat, breathing, flexibility, sun salutation, balance poses, studio,
    meditation, hamstrings
home brewing beer | hops, wort, yeast, fermenter, IPA, malt, bottling, gravity reading, sanitizer, kettle
car maintenance | oil change, brakes, tires, mechanic, engine light, battery, spark plugs, coolant, alignment,
    inspection
planning a wedding | venue, guest list, caterer, dress, invitations, photographer, vows, seating chart,
    florist, rehearsal
learning to sail | sailboat, tacking, jib, mainsail, knots, harbor, wind shift, tiller, dinghy, regatta
3D printing | filament, extruder, print bed, slicer, PLA, nozzle, supports, layer height, STL files, warping
oil painting | canvas, brushes, palette knife, linseed oil, glazing, underpainting, easel, pigments, landscape,
    turpentine
moving to Berlin | apartment hunt, Anmeldung, U-Bahn, German course, neighborhood, Kreuzberg, residence permit,
    landlord, bike, flatmates
stock investing | index funds, portfolio, dividends, brokerage, ETF, rebalancing, market dip, shares,
    expense ratio, retirement account
learning Spanish | conjugation, subjunctive, vocabulary, Duolingo, conversation partner, accent, podcasts,
    grammar, Spanish class, verbs
mountain biking | singletrack, suspension, downhill, trail park, clipless pedals, jumps, full face helmet,
    roots, berms, tubeless tires
fly fishing | fly rod, trout, casting, waders, river, tippet, nymphs, dry flies, reel, catch and release
podcast production | microphone, editing, episodes, guests, audio interface, show notes, listeners, recording,
    sponsors, RSS feed
baking cakes | frosting, layers, sponge, buttercream, oven temperature, piping bag, fondant, cake pan, vanilla,
    birthday cake
kubernetes at work | pods, deployments, helm charts, cluster, ingress, kubectl, namespaces, autoscaling,
    services, manifests
weightlifting | squat, deadlift, bench press, barbell, progressive overload, sets, reps, protein, gym,
    personal record
writing a novel | manuscript, plot outline, characters, first draft, revision, word count, agent query,
    chapters, dialogue, editor
learning to drive | driving test, parallel parking, instructor, learner permit, highway, mirrors, clutch,
    roundabouts, lessons, road signs
houseplants | monstera, pothos, repotting, sunlight, overwatering, fiddle leaf fig, succulents, potting mix,
    humidity, leaves
watching Formula 1 | race, pit stop, qualifying, driver standings, Ferrari, grand prix, tyres, championship,
    safety car, overtakes
skiing | slopes, ski lift, powder, moguls, ski boots, black diamond, lift pass, apres-ski, ski resort, carving
journaling | notebook, gratitude list, morning pages, fountain pen, reflection, prompts, habit tracker,
    entries, bullet journal, mood
making pottery | wheel throwing, clay, kiln, glaze, bisque, trimming, centering, mugs, studio, firing
studying for the bar exam | bar prep, torts, contracts, practice essays, flashcards, MBE questions, outlines,
    study schedule, evidence, exam day
volunteering at the shelter | animal shelter, volunteers, adoption event, cat room, dog walking, donations,
    kennels, fostering, shifts, rescue
electric vehicles | charging station, battery range, EV, kilowatt hours, home charger, Tesla, road trip,
    regenerative braking, incentives, charging speed
composting | compost bin, worms, food scraps, brown leaves, nitrogen, turning the pile, vermicompost,
    coffee grounds, decomposition, garden soil
meal prepping | containers, batch cooking, Sunday prep, chicken breast, rice, lunches, macros, freezer,
    grocery list, portions
learning to code in JavaScript | React, functions, DOM, npm, promises, closures, TypeScript, frontend,
    components, bundler
camping trips | tent, sleeping bag, campfire, camp stove, national park, hammock, lantern, firewood, cooler,
    reservation
ukulele | ukulele chords, strumming pattern, soprano ukulele, tuning pegs, songbook, fingerstyle, island songs,
    capo, chord chart, beginner songs
solving crossword puzzles | clues, grid, Sunday crossword, anagrams, cryptic crosswords, pencil, themes,
    answers, constructor, streak
trail running | trail shoes, vertical gain, ultramarathon, aid stations, hydration vest, technical descent,
    race bib, trail race, poles, switchback climbs
cat care | litter box, kitten, scratching post, vet visit, cat food, hairballs, grooming, cat tree,
    vaccinations, purring
machine learning course | neural networks, gradient descent, overfitting, training data, loss function,
    backpropagation, validation set, assignments, lectures, model accuracy
learning French | French verbs, pronunciation, passe compose, French class, vocabulary, Paris trip, liaisons,
    grammar drills, listening, French films
triathlon | swim leg, transition, bike leg, wetsuit, brick workouts, Ironman, race day, run leg, open water,
    triathlon bike
comic book collecting | issues, first editions, graded comics, Marvel, back issues, comic shop, variants,
    collection, longboxes, superheroes
tea ceremony and tea tasting | matcha, oolong, teapot, loose leaf, steeping time, green tea, tea tasting,
    gaiwan, aroma, tea house
budget travel in Southeast Asia | hostels, backpacking, Bangkok, night buses, street food, visas, islands,
    temples, budget, Hanoi
vintage watches | wristwatch, mechanical movement, Omega, dial, strap, watch collecting, chronograph,
    servicing, patina, Rolex
making cocktails | shaker, bitters, gin, vermouth, old fashioned, citrus, jigger, cocktail recipes, ice,
    bar cart
salsa dancing | dance partner, salsa steps, turns, dance class, rhythm, social dancing, footwork, leading,
    following, congress
raising chickens | coop, hens, eggs, chicken feed, rooster, nesting boxes, run, predators, molting, pullets
learning the violin | bow, violin strings, rosin, intonation, scales, vibrato, sheet music, violin teacher,
    posture, recital
budgeting and personal finance | spending tracker, emergency fund, credit card debt, budget app, savings goal,
    expenses, paycheck, subscriptions, frugal, net worth
stand-up comedy | open mic, jokes, set list, punchline, crowd work, comedy club, stage time, bits, headliner,
    writing jokes
video game speedrunning | speedrun, glitches, splits, world record, routing, practice runs, frame perfect,
    leaderboards, category, timer
genealogy research | family tree, ancestors, census records, DNA test, archives, great grandparents,
    birth certificates, immigration records, surnames, cousins
urban sketching | sketchbook, ink pens, watercolor, street scenes, perspective, sketch walk, line work,
    buildings, cafe sketches, sketch group
bread machine recipes | bread machine, loaf, yeast packet, whole wheat, dough cycle, crust setting,
    recipe book, sandwich bread, machine settings, rise
running a book club | book club, monthly pick, discussion questions, members, meeting, novel selection, host,
    snacks, reading schedule, reviews
learning to skateboard | skateboard, ollie, kickflip, skate park, deck, wheels, bearings, grip tape, pads,
    halfpipe
climate activism | climate strike, petition, emissions, protests, city council, carbon footprint, campaign,
    activists, renewable energy, rally
learning Mandarin | tones, characters, pinyin, Mandarin class, HSK, measure words, radicals, speaking partner,
    dictation, idioms
home theater setup | projector, soundbar, receiver, surround sound, subwoofer, screen, HDMI, speakers,
    calibration, movie nights
gaming PC build | graphics card, CPU, motherboard, RAM, power supply, cooling fans, case, SSD, thermal paste,
    benchmarks
figure skating | ice rink, skates, spins, jumps, axel, coach, routine, blades, edges, competition
orchid growing | orchids, phalaenopsis, bark mix, aerial roots, blooms, spikes, misting, orchid pot,
    repotting orchids, fertilizer
birthday party planning | party venue, invitations, cake order, balloons, party games, guest count,
    decorations, goody bags, theme, RSVP
open source contributions | pull requests, maintainers, issues, GitHub, code review, forks, documentation,
    contributors, releases, CI pipeline
learning to draw portraits | portrait drawing, proportions, graphite pencils, shading, eyes, facial features,
    sketching, charcoal, reference photos, likeness
tennis | serve, backhand, forehand, racket, tennis court, volley, doubles, topspin, tennis lessons, match
surfing | surfboard, waves, paddling, wetsuit, pop up, swell, surf spot, wipeout, longboard, surf lessons
visiting Japan | Kyoto, Tokyo, shinkansen, temples, ryokan, ramen, cherry blossoms, JR pass, onsen, Osaka
remote work setup | standing desk, monitor, ergonomic chair, video calls, home office, headset, productivity,
    remote team, time zones, coworking
sleep improvement | sleep schedule, insomnia, melatonin, bedtime routine, caffeine, naps, sleep tracker,
    mattress, blue light, deep sleep
meditation practice | mindfulness, breath awareness, meditation app, retreat, cushion, mantra, body scan,
    silent sitting, attention, calm
learning statistics | probability, hypothesis testing, p-values, distributions, confidence intervals, variance,
    sampling, Bayesian, regression models, statistics homework
minimalism and decluttering | decluttering, closet, donations, minimalism, possessions, storage boxes,
    capsule wardrobe, garage, tidying, selling items
apartment hunting in New York | broker fee, studio apartment, Brooklyn, lease, rent, roommates, walk-up,
    subway line, landlord, open house
growing herbs indoors | basil plant, grow light, mint, windowsill, rosemary, herb pots, parsley, pruning,
    thyme, cilantro
basketball league | pickup games, jump shot, rebounds, basketball league, point guard, dribbling, free throws,
    team practice, defense, playoffs
classical music concerts | symphony, orchestra, concert hall, conductor, Beethoven, season tickets, concerto,
    violin soloist, opera, Mahler
roasting coffee at home | green beans, roaster, first crack, roast level, cooling tray, chaff, light roast,
    origin, degassing, roast profile
bonsai | bonsai tree, juniper, wiring branches, pruning shears, root pruning, bonsai pot, nebari, deadwood,
    styling, ficus
learning Korean | hangul, Korean class, honorifics, K-dramas, Korean vocabulary, batchim, particles,
    speaking practice, TOPIK, Korean grammar
managing a software team | one-on-ones, sprint planning, hiring, performance reviews, roadmap, engineers,
    standups, team morale, estimates, retrospectives
parenting a toddler | toddler, tantrums, daycare, naps, potty training, picky eating, bedtime stories,
    playground, language development, screen time
rowing | rowing machine, erg, stroke rate, crew, oars, regatta, catch, rowing club, sculling, 2k test
candle making | soy wax, wicks, fragrance oils, candle jars, melting pot, pouring temperature, scent throw,
    dyes, candle tins, curing
DIY electronics with Arduino | Arduino, breadboard, sensors, soldering, LEDs, resistors, microcontroller,
    servo motor, circuits, firmware
learning Latin | declensions, Cicero, Latin grammar, conjugations, translation, Virgil, cases,
    vocabulary lists, ablative, Latin class
motorcycle touring | motorcycle, saddlebags, riding gear, touring route, highway miles, motorcycle helmet,
    rain gear, fuel stops, twisties, riding group
ice hockey | hockey stick, puck, skating drills, rink, goalie, slap shot, hockey league, face-off, power play,
    hockey pads
wine tasting | vineyard, cabernet, tasting notes, sommelier, pinot noir, tannins, wine cellar, vintage,
    decanter, winery tour
astronomy club | star party, constellations, planets, meteor shower, Jupiter, club meeting, star chart,
    eclipse, observatory, Saturn rings
quilting | quilt blocks, fabric, sewing machine, batting, patchwork, rotary cutter, quilt pattern, binding,
    quilting cotton, seams
archery | bow, arrows, target, recurve, draw weight, archery range, release, quiver, sight, fletching
hiking the Appalachian Trail | thru-hike, shelters, trail magic, Maine, Georgia, resupply, trail name, blazes,
    bear canister, zero days
learning to cook Indian food | curry, garam masala, dal, naan, spices, tandoori, biryani, turmeric, chutney,
    cumin seeds
fostering kittens | foster kittens, bottle feeding, kitten formula, weighing, shelter coordinator, adoption,
    litter training, socializing, kitten room, vet checks
organizing a hackathon | hackathon, sponsors, teams, judging, prizes, venue, mentors, pitches, registration,
    demo day
ballet classes | barre, plie, pointe shoes, pirouette, ballet teacher, arabesque, turnout, recital,
    ballet studio, adagio
drone photography | drone, aerial shots, propellers, flight time, gimbal, FAA rules, drone batteries, altitude,
    footage, landing
studying medieval history | castles, crusades, knights, feudalism, monasteries, medieval manuscripts, kings,
    Byzantium, chronicles, plague
making sushi | sushi rice, nori, salmon, rolling mat, wasabi, nigiri, maki rolls, rice vinegar, tuna,
    sushi knife
rescue dog adoption | rescue dog, adoption papers, separation anxiety, dog bed, shelter visit, trust building,
    vet appointment, dog trainer, rescue group, leash walking
running for city council | campaign, volunteers, canvassing, debates, city council, fundraising, voters,
    yard signs, election, platform
restoring a vintage car | vintage car, carburetor, rust repair, restoration, chrome, upholstery,
    engine rebuild, car parts, paint job, classic car show
"""


def _parse_topics(spec: str) -> list[tuple[str, list[str]]]:
    topics: list[tuple[str, list[str]]] = []
    joined: list[str] = []
    for line in spec.strip().splitlines():
        if line.startswith(" ") and joined:  # continuation of the previous topic's vocabulary
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    for line in joined:
        name, words = line.split("|")
        topics.append((name.strip(), [w.strip() for w in words.split(",") if w.strip()]))
    return topics


TOPICS = _parse_topics(_TOPIC_SPEC)

_USER_TEMPLATES = (
    "I've been really into {t} lately, especially the {a} and the {b}.",
    "Yesterday I spent the whole afternoon on {t}; the {a} was tricky but the {b} went fine.",
    "Any advice on the {a} for {t}? The {b} keeps giving me trouble.",
    "Quick update on {t}: I finally sorted out the {a}, next come the {b} and the {c}.",
    "What matters more in {t}, the {a} or the {b}?",
    "My friend asked me about {t} and I explained the {a}, the {b} and the {c}.",
    "For {t} I got a new {a} this week, and I'm reading about the {b}.",
    "I keep thinking about the {a} in {t}; maybe the {b} is the real problem.",
    "Back to {t}: how should I plan the {a} around the {b}?",
    "Today's {t} session was {a}, then {b}, then a bit of {c}.",
    "I'm not sure my {t} is improving, the {a} still feels hard and the {b} too.",
    "I love {t}, the {a} part most of all.",
)
_AGENT_TEMPLATES = (
    "With {t}, start with the {a}; the {b} gets easier with practice.",
    "A common {t} mistake is rushing the {a}. Take time with the {b} and the {c}.",
    "Good question about {t}. The {a} matters most, but don't ignore the {b}.",
    "Keep a small {t} log: note the {a}, the {b} and how the {c} felt.",
    "For {t}, change one thing at a time, first the {a}, later the {b}.",
    "That sounds like solid {t} progress. The {a} and the {b} usually improve together.",
    "Many people in {t} underestimate the {c}; pairing it with the {a} helps.",
    "If the {b} is the issue in {t}, check the {a} first.",
)
_QUERY_TEMPLATES = (
    "What did I say about the {a} in {t}?",
    "Any notes on my {t} and the {b}?",
    "Remind me what I tried with the {a} and the {b}.",
    "How is my {t} going?",
    "What was your advice about the {a}?",
    "Did we talk about the {b} before?",
    "What problems did I have with {t}?",
    "Which {t} topics did we cover last time, like the {a}?",
    "Tell me again about the {a} and the {c} for {t}.",
    "What's my plan for the {b}?",
)
_OFF_TOPIC_QUERIES = (
    "What's the weather like today?",
    "Can you summarise everything you know about me?",
    "What did we talk about last week?",
    "Recommend me something new to try.",
    "What are my hobbies?",
    "Where do I live?",
)


@dataclass(frozen=True)
class Turn:
    """One synthetic exchange."""

    user_input: str
    agent_response: str
    thread_id: str
    timestamp: dt.datetime
    turn_id: str
    topic: int


def _fill(template: str, topic: int, rng: random.Random) -> str:
    name, words = TOPICS[topic]
    a, b, c = rng.sample(words, 3)
    return template.format(t=name, a=a, b=b, c=c)


def dialogue(seed: int, *, threads: int = 1, prefix: str = "t") -> Iterator[Turn]:
    """An endless, deterministic stream of turns grouped in topic sessions.

    A session is 2-6 turns on one topic in one thread; sessions rotate over the
    threads; the clock advances 1-3 minutes per turn and 1-8 hours between
    sessions.
    """
    rng = random.Random(seed)
    clock = T0
    n = 0
    session = 0
    while True:
        topic = rng.randrange(len(TOPICS))
        thread = f"chat-{session % threads}"
        for _ in range(rng.randint(2, 6)):
            clock += dt.timedelta(seconds=rng.randint(60, 180))
            yield Turn(
                user_input=_fill(rng.choice(_USER_TEMPLATES), topic, rng),
                agent_response=_fill(rng.choice(_AGENT_TEMPLATES), topic, rng),
                thread_id=thread,
                timestamp=clock,
                turn_id=f"{prefix}{n}",
                topic=topic,
            )
            n += 1
        clock += dt.timedelta(hours=rng.randint(1, 8))
        session += 1


def queries(seed: int, n: int, topics: Sequence[int]) -> list[str]:
    """``n`` distinct-ish queries, ~90% about ``topics`` (those the user talked about)."""
    rng = random.Random(seed)
    pool = sorted(set(topics)) or list(range(len(TOPICS)))
    out: list[str] = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(rng.choice(_OFF_TOPIC_QUERIES))
        else:
            out.append(_fill(rng.choice(_QUERY_TEMPLATES), rng.choice(pool), rng))
    return out


# --------------------------------------------------------------------------- #
# Measurement helpers
# --------------------------------------------------------------------------- #


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in [0, 100])."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean / min / max in milliseconds."""
    ms = [s * 1000.0 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": statistics.fmean(ms),
        "min_ms": min(ms),
        "max_ms": max(ms),
    }


def time_calls(fn: Callable[[Any], Any], args: Sequence[Any]) -> list[float]:
    """Per-call wall times (seconds) of ``fn(arg)`` for each ``arg``."""
    out: list[float] = []
    for arg in args:
        t = time.perf_counter()
        fn(arg)
        out.append(time.perf_counter() - t)
    return out


class Profiler:
    """Optional cProfile around named phases; prints the top functions."""

    def __init__(self, enabled: bool, top: int = 30) -> None:
        self.enabled = enabled
        self.top = top
        self.reports: dict[str, str] = {}

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        if not self.enabled:
            return fn()
        prof = cProfile.Profile()
        prof.enable()
        try:
            return fn()
        finally:
            prof.disable()
            buf = io.StringIO()
            stats = pstats.Stats(prof, stream=buf)
            stats.sort_stats("cumulative").print_stats(self.top)
            buf.write("\n--- by own time ---\n")
            stats.sort_stats("tottime").print_stats(self.top)
            self.reports[name] = buf.getvalue()


def log(msg: str) -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------- #
# Phases
# --------------------------------------------------------------------------- #


@dataclass
class BuildResult:
    """What feeding turns into one user produced."""

    turns: int = 0
    seconds: float = 0.0
    per_turn: list[float] = field(default_factory=list)
    segments_created: int = 0
    segments_evicted: int = 0
    segments_promoted: int = 0
    amu_events: int = 0
    topics: list[int] = field(default_factory=list)
    threads: set[str] = field(default_factory=set)

    def summary(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "total_seconds": self.seconds,
            "turns_per_second_total": self.turns / self.seconds if self.seconds else 0.0,
            "per_turn": summary_ms(self.per_turn) if self.per_turn else {},
            "turns_per_second_median": 1.0 / statistics.median(self.per_turn) if self.per_turn else 0.0,
            "segments_created": self.segments_created,
            "segments_evicted": self.segments_evicted,
            "segments_promoted": self.segments_promoted,
            "amu_events": self.amu_events,
        }


def feed(
    memory: MemoryOS,
    user_id: str,
    turns: Iterator[Turn],
    *,
    target_pages: int,
    threads: int,
    progress: bool = False,
    max_turns: int | None = None,
) -> BuildResult:
    """Add turns until the user has ``target_pages`` MTM pages (the exact count).

    Every page that leaves STM lands in MTM unless heat eviction drops a
    segment, so ``target_pages + threads * STM_CAPACITY`` turns are enough
    when nothing is evicted; with evictions the loop keeps going (up to
    ``max_turns``).
    """
    res = BuildResult()
    planned = target_pages + threads * STM_CAPACITY
    limit = max_turns if max_turns is not None else planned * 2
    start = time.perf_counter()
    next_report = PROGRESS_EVERY
    while res.turns < limit:
        # the exact count is checked only once the planned turns are in (stats() is not free)
        if res.turns >= planned:
            st = memory.stats(user_id=user_id)
            if st.mtm_pages >= target_pages:
                break
        turn = next(turns)
        t = time.perf_counter()
        report = memory.add_turn(
            turn.user_input,
            turn.agent_response,
            user_id=user_id,
            thread_id=turn.thread_id,
            timestamp=turn.timestamp,
            turn_id=turn.turn_id,
        )
        res.per_turn.append(time.perf_counter() - t)
        res.turns += 1
        res.topics.append(turn.topic)
        res.threads.add(turn.thread_id)
        res.segments_created += len(report.segments_created)
        res.segments_evicted += len(report.segments_evicted)
        res.segments_promoted += len(report.segments_promoted)
        res.amu_events += len(report.events)
        if progress and res.turns >= next_report:
            next_report += PROGRESS_EVERY
            elapsed = time.perf_counter() - start
            st = memory.stats(user_id=user_id)
            recent = res.per_turn[-PROGRESS_EVERY:]
            log(
                f"  {res.turns:>6} turns  mtm_pages={st.mtm_pages:>6}  segments={st.segments:>3}  "
                f"created={res.segments_created} evicted={res.segments_evicted}  "
                f"{elapsed:7.1f}s  overall {res.turns / elapsed:5.1f} turns/s  "
                f"last {len(recent)}: median {statistics.median(recent) * 1000:6.1f} ms/turn"
            )
    res.seconds = time.perf_counter() - start
    return res


def baseline_embed(memory: MemoryOS, texts: Sequence[str]) -> list[float]:
    """Per-call time of one ``embed_query`` (the embedding part every call pays)."""
    return time_calls(memory.embeddings.embed_query, texts)


def baseline_faiss(
    n_vectors: int, dim: int, n_queries: int, k: int = 10, omp_threads: int | None = None
) -> list[float]:
    """Per-query time of a bare ``IndexFlatIP`` top-k search over ``n_vectors`` unit vectors.

    ``omp_threads``: run with this many FAISS OpenMP threads (restored after);
    ``None`` keeps the process setting.
    """
    if omp_threads is not None:
        previous = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(omp_threads)
        try:
            return baseline_faiss(n_vectors, dim, n_queries, k)
        finally:
            faiss.omp_set_num_threads(previous)
    rng = np.random.default_rng(SEED)
    base = rng.standard_normal((n_vectors, dim), dtype=np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(dim)
    index.add(base)
    qs = rng.standard_normal((n_queries, dim), dtype=np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    for q in qs[:10]:
        index.search(q.reshape(1, -1), k)
    return time_calls(lambda q: index.search(q.reshape(1, -1), k), list(qs))


def measure_ingest(store_name: str, memory: MemoryOS, profiler: Profiler) -> tuple[BuildResult, dict[str, Any]]:
    """307 turns (300 MTM pages) of one user, one thread, timed per turn.

    With ``--profile`` the same dialogue is fed again to a second user under
    cProfile (untimed), so the profiler does not inflate the reported numbers.
    """
    user = f"ingest-{store_name}"
    res = feed(memory, user, dialogue(SEED, threads=1, prefix="i"), target_pages=SMALL_PAGES, threads=1)
    st = memory.stats(user_id=user)
    if profiler.enabled:
        profiler.run(
            f"ingest[{store_name}] (separate untimed pass, {SMALL_PAGES + STM_CAPACITY} turns)",
            lambda: feed(
                memory, user + "-profiled", dialogue(SEED, threads=1, prefix="i"), target_pages=SMALL_PAGES, threads=1
            ),
        )
    return res, {"user_id": user, "stats": vars(st)}


def measure_retrieval(
    label: str,
    memory: MemoryOS,
    user: str,
    thread_id: str,
    topics: Sequence[int],
    n_queries: int,
    warmup: int,
    profiler: Profiler,
) -> dict[str, Any]:
    """Retrieval latency over ``n_queries`` queries (after ``warmup``), with same-process baselines."""
    st = memory.stats(user_id=user)
    qs = queries(SEED + zlib.crc32(label.encode()) % 1000, warmup + n_queries, topics)
    warm, timed = qs[:warmup], qs[warmup:]
    for q in warm:
        memory.retrieve(q, user_id=user, thread_id=thread_id)

    def run() -> list[float]:
        return time_calls(lambda q: memory.retrieve(q, user_id=user, thread_id=thread_id), timed)

    lat = run()
    # baselines, measured right after, on the same queries
    embed = baseline_embed(memory, timed)
    kw = time_calls(lambda q: extract_keywords(q, memory.config.page_keywords), timed)
    dim = int(getattr(memory.embeddings, "dimension", 384))
    flat_pages = baseline_faiss(st.mtm_pages, dim, len(timed))
    flat_pages_1t = baseline_faiss(st.mtm_pages, dim, len(timed), omp_threads=1)
    # second pass of retrieval after the baselines: shows drift of the machine
    lat2 = run()
    if profiler.enabled:
        profiler.run(f"retrieve[{label}] (separate untimed pass, {len(timed)} queries)", run)
    ctx = memory.retrieve(timed[0], user_id=user, thread_id=thread_id)
    out: dict[str, Any] = {
        "label": label,
        "user_id": user,
        "stats": vars(st),
        "queries": len(timed),
        "warmup": warmup,
        "retrieve": summary_ms(lat),
        "retrieve_second_pass": summary_ms(lat2),
        "baseline_embed_query": summary_ms(embed),
        "baseline_extract_keywords": summary_ms(kw),
        "baseline_faiss_flat_search": summary_ms(flat_pages) | {"n_vectors": st.mtm_pages, "k": 10},
        "baseline_faiss_flat_search_1_omp_thread": summary_ms(flat_pages_1t) | {"n_vectors": st.mtm_pages, "k": 10},
        "example": {
            "query": timed[0],
            "segments": len(ctx.segments),
            "pages": len(ctx.pages),
            "user_facts": len(ctx.user_facts),
        },
    }
    irreducible = out["baseline_embed_query"]["p50_ms"] + out["baseline_faiss_flat_search"]["p50_ms"]
    out["irreducible_p50_ms"] = irreducible
    out["ratio_p50_to_irreducible"] = out["retrieve"]["p50_ms"] / irreducible if irreducible else 0.0
    return out


def turn_dicts(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """Synthetic turns as ``add_turn`` keyword arguments (and ``add_turns`` items)."""
    return [
        {
            "user_input": t.user_input,
            "agent_response": t.agent_response,
            "thread_id": t.thread_id,
            "timestamp": t.timestamp,
            "turn_id": t.turn_id,
        }
        for t in turns
    ]


def locomo_turns(path: Path, conversation: int = 0) -> list[dict[str, Any]]:
    """A LoCoMo conversation by the plain protocol (``ingest_plain``'s turns), one thread."""
    from langchain_memoryos.evaluation.locomo import load_locomo, plain_pages, plain_turn

    sample = load_locomo(path)[conversation]
    return [
        {
            "user_input": plain_turn(p)[0],
            "agent_response": plain_turn(p)[1],
            "thread_id": "locomo",
            "timestamp": p.timestamp,
            "metadata": {"source_id": list(p.dia_ids)},
        }
        for p in plain_pages(sample)
    ]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its live children (a bulk write's worker), Linux; else own.

    ``resource`` counts a child only once it has exited; the worker process lives on, so its
    ``/proc/<pid>/stat`` is read instead.
    """
    own = os.times()
    total = own.user + own.system
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def measure_write_ratios(
    label: str, make_memory: Callable[[], MemoryOS], turns: Sequence[dict[str, Any]], rounds: int
) -> dict[str, Any]:
    """The write ratios (add_turn / its page embedded alone, add_turns / add_turn) on the same turns, in this process.

    * ``add_turn`` median / embed-alone median: each turn's page is embedded
      alone (``encode_texts``, the text ``add_turn`` embeds) right after its
      ``add_turn``, so machine load hits both alike.
    * ``add_turns`` turns/s / ``add_turn`` turns/s: per round, the turns go to
      a fresh user one by one and, in another memory (nothing embedded by the
      first is kept for it), to another in one ``add_turns`` call; the ratio
      of the round's times; the median over the rounds.
    * the CPU seconds of both (this process and its worker): a bulk write that keeps both
      cores busy cannot take less than its CPU seconds / cores, so ``one-by-one time / (bulk
      CPU / cores)`` bounds the second ratio whatever the scheduling.
    """
    from langchain_memoryos.store.settings import embedding_text

    per_turn: list[float] = []
    embed: list[float] = []
    one_s: list[float] = []
    bulk_s: list[float] = []
    one_cpu: list[float] = []
    bulk_cpu: list[float] = []
    for r in range(rounds):
        # two memories: nothing the one-by-one run embedded or cached can serve the bulk write
        memory, bulk = make_memory(), make_memory()
        try:
            # the encoder and the worker process warm (a call whose leaving pages are fewer than
            # MIN_PARALLEL_PAGES analyses them in this process and would not start the worker)
            memory.add_turns(turns[:40], user_id=f"warm-{r}")
            bulk.add_turns(turns[:40], user_id=f"warm-{r}")
            start, cpu = time.perf_counter(), cpu_seconds()
            for turn in turns:
                t = time.perf_counter()
                memory.add_turn(**turn, user_id=f"one-{r}")
                per_turn.append(time.perf_counter() - t)
                text = DialoguePage(id="x", user_input=turn["user_input"], agent_response=turn["agent_response"])
                page_text = embedding_text(text.embedding_text, memory.config.max_embedding_chars)
                t = time.perf_counter()
                encode_texts(memory.embeddings, [page_text])
                embed.append(time.perf_counter() - t)
            one_s.append(time.perf_counter() - start - sum(embed[-len(turns) :]))
            one_cpu.append(cpu_seconds() - cpu - sum(embed[-len(turns) :]))  # the embeds alone ran on one core
            start, cpu = time.perf_counter(), cpu_seconds()
            bulk.add_turns(turns, user_id=f"bulk-{r}")
            bulk_s.append(time.perf_counter() - start)
            bulk_cpu.append(cpu_seconds() - cpu)
            if vars(memory.stats(user_id=f"one-{r}")) != vars(bulk.stats(user_id=f"bulk-{r}")):
                raise AssertionError(f"{label}: add_turns did not store what add_turn stores")
        finally:
            memory.close()
            bulk.close()
    ratios = [a / b for a, b in zip(one_s, bulk_s, strict=True)]
    n = len(turns)
    return {
        "label": label,
        "turns": n,
        "rounds": rounds,
        "add_turn_p50_ms": statistics.median(per_turn) * 1000,
        "embed_alone_p50_ms": statistics.median(embed) * 1000,
        "add_turn_to_embed_ratio": statistics.median(per_turn) / statistics.median(embed),
        "add_turn_tps": [n / x for x in one_s],
        "add_turns_tps": [n / x for x in bulk_s],
        "bulk_ratios": ratios,
        "bulk_ratio_median": statistics.median(ratios),
        "add_turn_cpu_ms_per_turn": statistics.median(one_cpu) / n * 1000,
        "add_turns_cpu_ms_per_turn": statistics.median(bulk_cpu) / n * 1000,
        "bulk_ratio_bound": statistics.median(
            [a / (c / CORES) for a, c in zip(one_s, bulk_cpu, strict=True) if c > 0] or [float("nan")]
        ),
    }


# --------------------------------------------------------------------------- #
# Report
# --------------------------------------------------------------------------- #


def _git_state() -> str:
    """``<short commit>`` plus ``+dirty`` when the package has uncommitted changes (best effort)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "langchain_memoryos"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+dirty" if dirty else "")


def _fmt_load(load: Any) -> str:
    return "/".join(f"{x:.1f}" for x in load) if load else "?"


def _status(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def print_report(results: dict[str, Any]) -> None:
    """The final table."""
    log("")
    log("=" * 100)
    log("RESULTS  (all times wall clock on this machine; medians are the numbers to compare)")
    log("=" * 100)
    env = results["environment"]
    log(
        f"machine: {env['platform']}  cpus={env['cpu_count']}  python {env['python']}  "
        f"numpy {env['numpy']}  faiss {env['faiss']}  langchain-memoryos {env['package']} (git {env['git']})"
    )
    log(
        f"threads: {env['thread_env']}  faiss OpenMP threads={env['faiss_omp_threads']}  "
        f"load average start {_fmt_load(env['load_average'])} end {_fmt_load(env.get('load_average_end'))}"
    )
    log("")
    log(
        f"{'INGEST (MemoryOS.add_turn, 300 MTM pages = 307 turns)':<56}{'median/turn':>12}{'p95/turn':>10}"
        f"{'tps(median)':>12}{'tps(total)':>11}  target"
    )
    for name, ing in results["ingest"].items():
        s = ing["result"]
        tps_med = s["turns_per_second_median"]
        log(
            f"  {name:<54}{s['per_turn']['p50_ms']:>9.1f} ms{s['per_turn']['p95_ms']:>7.1f} ms"
            f"{tps_med:>12.1f}{s['turns_per_second_total']:>11.1f}  >= {TARGET_INGEST_TPS:.0f}/s: "
            f"median {_status(tps_med >= TARGET_INGEST_TPS)}, "
            f"total {_status(s['turns_per_second_total'] >= TARGET_INGEST_TPS)}"
        )
    b = results["ingest_baseline"]
    log(
        f"  {'baseline: 1 embed (page text, encode)':<54}{b['embed_page']['p50_ms']:>9.1f} ms"
        f"{b['embed_page']['p95_ms']:>7.1f} ms  -> ceiling {1000 / b['embed_page']['p50_ms']:.1f} turns/s "
        "if a turn cost one embedding"
    )
    log(
        f"  {'baseline: extract_keywords(page text)':<54}{b['keywords_page']['p50_ms']:>9.1f} ms"
        f"{b['keywords_page']['p95_ms']:>7.1f} ms"
    )
    for name, ing in results["ingest"].items():
        s = ing["result"]
        st = ing["stats"]
        log(
            f"  {name}: final stats() segments={st['segments']} mtm_pages={st['mtm_pages']} "
            f"stm={st['stm_pages']} facts={st['user_facts']} created={s['segments_created']} "
            f"evicted={s['segments_evicted']} promoted={s['segments_promoted']}"
        )
    if results.get("write_ratios"):
        log("")
        log("WRITE RATIOS (same turns, one process; medians)")
        for w in results["write_ratios"]:
            log(
                f"  {w['label']}: add_turn p50 {w['add_turn_p50_ms']:.1f} ms vs embed-alone p50 "
                f"{w['embed_alone_p50_ms']:.1f} ms -> {w['add_turn_to_embed_ratio']:.2f}x (target <= 1.25: "
                f"{_status(w['add_turn_to_embed_ratio'] <= 1.25)})"
            )
            log(
                f"  {w['label']}: add_turns {statistics.median(w['add_turns_tps']):.1f} turns/s vs add_turn one by one "
                f"{statistics.median(w['add_turn_tps']):.1f} turns/s -> {w['bulk_ratio_median']:.2f}x median of "
                f"{w['rounds']} rounds {[round(x, 2) for x in w['bulk_ratios']]} (target >= 2: "
                f"{_status(w['bulk_ratio_median'] >= 2.0)})"
            )
            log(
                f"  {w['label']}: CPU per turn {w['add_turn_cpu_ms_per_turn']:.1f} ms one by one, "
                f"{w['add_turns_cpu_ms_per_turn']:.1f} ms in bulk (worker included): on {CORES} cores the bulk "
                f"ratio cannot exceed {w['bulk_ratio_bound']:.2f}x"
            )
    small = [r for r in results["retrieval"] if r["stats"]["mtm_pages"] == SMALL_PAGES]
    for r in small:
        p50 = r["retrieve"]["p50_ms"]
        log(f"  retrieval p50 at {SMALL_PAGES} pages [{r['label']}]: {p50:.2f} ms (target <= 20: {_status(p50 <= 20)})")
    log("")
    log(
        f"{'RETRIEVAL (MemoryOS.retrieve)':<40}{'pages':>7}{'segs':>6}{'p50':>9}{'p95':>9}{'mean':>9}"
        f"{'p50 2nd':>9}{'embed p50':>11}{'faiss p50':>11}{'faiss1 p50':>11}{'yake p50':>10}{'ratio':>7}  target"
    )
    for r in results["retrieval"]:
        lat = r["retrieve"]
        target = ""
        if r["stats"]["mtm_pages"] >= LARGE_PAGES:
            target = f"p95 <= {TARGET_P95_MS_LARGE:.0f} ms {_status(lat['p95_ms'] <= TARGET_P95_MS_LARGE)}"
        elif r.get("large"):
            target = f"(p95 <= {TARGET_P95_MS_LARGE:.0f} ms is for {LARGE_PAGES} pages)"
        log(
            f"  {r['label']:<38}{r['stats']['mtm_pages']:>7}{r['stats']['segments']:>6}"
            f"{lat['p50_ms']:>9.2f}{lat['p95_ms']:>9.2f}{lat['mean_ms']:>9.2f}"
            f"{r['retrieve_second_pass']['p50_ms']:>9.2f}"
            f"{r['baseline_embed_query']['p50_ms']:>11.2f}{r['baseline_faiss_flat_search']['p50_ms']:>11.3f}"
            f"{r['baseline_faiss_flat_search_1_omp_thread']['p50_ms']:>11.3f}"
            f"{r['baseline_extract_keywords']['p50_ms']:>10.2f}{r['ratio_p50_to_irreducible']:>7.2f}  {target}"
        )
    log("  (ms; faiss = bare IndexFlatIP top-10 over as many random vectors as the user has MTM pages, with the")
    log("   process' OpenMP threads; faiss1 = the same with 1 OpenMP thread;")
    log("   ratio = retrieve p50 / (embed p50 + faiss p50): ~1 means retrieval is its irreducible parts)")
    big = results.get("large_build")
    if big:
        s = big["result"]
        st = big["stats"]
        log("")
        log(
            f"LARGE USER BUILD: {s['turns']} turns in {s['total_seconds']:.0f}s "
            f"({s['turns_per_second_total']:.1f} turns/s total, median {s['per_turn']['p50_ms']:.1f} ms/turn, "
            f"p95 {s['per_turn']['p95_ms']:.1f} ms)"
        )
        log(
            f"  final stats(): segments={st['segments']} mtm_pages={st['mtm_pages']} stm_pages={st['stm_pages']} "
            f"user_facts={st['user_facts']} agent_facts={st['agent_facts']}  "
            f"(created={s['segments_created']} evicted={s['segments_evicted']} promoted={s['segments_promoted']})"
        )
        if big.get("loaded_from"):
            log(f"  (build figures from the run that saved {big['loaded_from']}; this run loaded it with import_user)")
        if big.get("early_vs_late_ms"):
            e = big["early_vs_late_ms"]
            log(f"  add_turn median, first 2000 turns: {e['first']:.1f} ms; last 2000 turns: {e['last']:.1f} ms")
    log("=" * 100)


# --------------------------------------------------------------------------- #
# Main
# --------------------------------------------------------------------------- #


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"large user of {QUICK_LARGE_PAGES} pages, not {LARGE_PAGES}"
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this path")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per user (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed warm-up queries per user (default 20)")
    parser.add_argument(
        "--large-threads", type=int, default=4, help="conversation threads (thread_id) of the large user (default 4)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile ingest and retrieval in separate, untimed passes; print the top functions",
    )
    parser.add_argument("--profile-top", type=int, default=30, help="functions shown per profile (default 30)")
    parser.add_argument("--skip-large", action="store_true", help="only the 300-page measurements")
    parser.add_argument(
        "--ratio-rounds", type=int, default=3, help="rounds of the add_turns / add_turn comparison (default 3)"
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        help="also measure the write ratios on conversation 0 of this LoCoMo file (plain protocol), e.g. "
        "../shared/data/locomo_dev.json",
    )
    parser.add_argument(
        "--ratios-only", action="store_true", help="only the write ratios (and retrieval at 300 pages), no large user"
    )
    parser.add_argument(
        "--single-thread",
        action="store_true",
        help="re-run with OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1 (one math thread for "
        "OpenBLAS and FAISS' OpenMP); the default measures the libraries' own threading",
    )
    parser.add_argument(
        "--save-large", type=Path, help="after building the large user, save it (export_user) to this JSON file"
    )
    parser.add_argument(
        "--load-large",
        type=Path,
        help="instead of building the large user through add_turn, load a --save-large file (import_user); "
        "only retrieval is then measured at that size",
    )
    args = parser.parse_args(argv)
    if args.single_thread and any(os.environ.get(v) != "1" for v in _THREAD_VARS):
        # the thread pools are sized when numpy/faiss load, so start over with the variables set
        for var in _THREAD_VARS:
            os.environ[var] = "1"
        rest = list(sys.argv[1:] if argv is None else argv)
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), *rest])
    large_pages = QUICK_LARGE_PAGES if args.quick else LARGE_PAGES
    profiler = Profiler(args.profile, args.profile_top)

    results: dict[str, Any] = {
        "environment": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "faiss": getattr(faiss, "__version__", "?"),
            "package": __version__,
            "git": _git_state(),
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "thread_env": {v: os.environ.get(v) for v in _THREAD_VARS},
            "faiss_omp_threads": faiss.omp_get_max_threads(),
        },
        "parameters": {
            "quick": args.quick,
            "small_pages": SMALL_PAGES,
            "large_pages": large_pages,
            "queries": args.queries,
            "warmup": args.warmup,
            "large_threads": args.large_threads,
            "topics": len(TOPICS),
            "seed": SEED,
            "profile": args.profile,
        },
        "targets": {"ingest_turns_per_second": TARGET_INGEST_TPS, "retrieve_p95_ms_at_20000": TARGET_P95_MS_LARGE},
        "ingest": {},
        "retrieval": [],
    }
    log(
        f"bench_engine: {len(TOPICS)} topics, seed {SEED}, large user {large_pages} pages"
        f"{' (--quick)' if args.quick else ''}; load average {_fmt_load(results['environment']['load_average'])}; "
        f"threads {results['environment']['thread_env']}, faiss OpenMP {faiss.omp_get_max_threads()}"
    )

    # -- warm-up: model weights, YAKE, FAISS, imports (not timed) ---------------
    t = time.perf_counter()
    warm = MemoryOS()
    for turn in _take(dialogue(SEED + 1, prefix="w"), 15):
        warm.add_turn(
            turn.user_input,
            turn.agent_response,
            user_id="warm",
            thread_id=turn.thread_id,
            timestamp=turn.timestamp,
            turn_id=turn.turn_id,
        )
    warm.retrieve("warm up query about sourdough", user_id="warm", thread_id="chat-0")
    log(f"warm-up (model load, first calls): {time.perf_counter() - t:.1f}s")

    # -- ingest baselines --------------------------------------------------------
    sample = list(_take(dialogue(SEED + 2, prefix="b"), 100))
    pages = [DialoguePage(id=x.turn_id, user_input=x.user_input, agent_response=x.agent_response) for x in sample]
    # what add_turn embeds (``embedding_text``; older versions embedded ``text``) and what the controller keywords
    embed_texts = [getattr(p, "embedding_text", p.text) for p in pages]
    keyword_texts = [f"{p.user_input}\n{p.agent_response}" for p in pages]
    results["ingest_baseline"] = {
        "embed_page": summary_ms(time_calls(lambda s: encode_texts(warm.embeddings, [s]), embed_texts)),
        "keywords_page": summary_ms(
            time_calls(lambda s: extract_keywords(s, warm.config.page_keywords), keyword_texts)
        ),
    }

    # -- ingest: InMemoryStore, then SqliteStore ------------------------------
    ingest_memories: dict[str, MemoryOS] = {}
    small_topics: list[int] = []
    tmpdir = tempfile.TemporaryDirectory(prefix="bench_memoryos_")
    try:
        factories: tuple[tuple[str, Callable[[], MemoryOS]], ...] = (
            ("InMemoryStore", MemoryOS),
            ("SqliteStore", lambda: MemoryOS.from_sqlite(Path(tmpdir.name) / "bench.db")),
        )
        for store_name, factory in factories:
            memory = factory()
            log(f"ingest [{store_name}]: {SMALL_PAGES + STM_CAPACITY} turns ...")
            res, info = measure_ingest(store_name, memory, profiler)
            s = res.summary()
            log(
                f"  median {s['per_turn']['p50_ms']:.1f} ms/turn ({s['turns_per_second_median']:.1f} turns/s), "
                f"total {s['turns_per_second_total']:.1f} turns/s; stats {info['stats']}"
            )
            results["ingest"][store_name] = {"result": s, "stats": info["stats"]}
            ingest_memories[store_name] = memory
            if store_name == "InMemoryStore":
                small_topics = res.topics

        # -- retrieval at 300 pages (the users just built) ---------------------
        for store_name, memory in ingest_memories.items():
            label = f"{SMALL_PAGES} pages [{store_name}]"
            log(f"retrieve {label}: {args.warmup} warm-up + {args.queries} queries ...")
            r = measure_retrieval(
                label, memory, f"ingest-{store_name}", "chat-0", small_topics, args.queries, args.warmup, profiler
            )
            log(
                f"  p50 {r['retrieve']['p50_ms']:.2f} ms  p95 {r['retrieve']['p95_ms']:.2f} ms  "
                f"(embed p50 {r['baseline_embed_query']['p50_ms']:.2f} ms)"
            )
            results["retrieval"].append(r)
        for memory in ingest_memories.values():
            memory.close()
    finally:
        tmpdir.cleanup()

    # -- write ratios: add_turn vs embed alone, add_turns vs add_turn ----
    results["write_ratios"] = []
    ratio_dir = tempfile.TemporaryDirectory(prefix="bench_memoryos_ratios_")
    try:
        sets = [("synthetic 307 turns [SqliteStore]", turn_dicts(list(_take(dialogue(SEED + 4, prefix="r"), 307))))]
        if args.locomo:
            sets.append((f"LoCoMo conversation 0 ({args.locomo.name}) [SqliteStore]", locomo_turns(args.locomo)))
        counter = iter(range(10_000))
        for label, turn_set in sets:
            log(f"write ratios [{label}]: {len(turn_set)} turns x {args.ratio_rounds} rounds ...")
            w = measure_write_ratios(
                label,
                lambda: MemoryOS.from_sqlite(Path(ratio_dir.name) / f"ratios-{next(counter)}.db"),  # noqa: B023
                turn_set,
                args.ratio_rounds,
            )
            log(f"  add_turn/embed {w['add_turn_to_embed_ratio']:.2f}x, bulk {w['bulk_ratio_median']:.2f}x")
            results["write_ratios"].append(w)
    finally:
        ratio_dir.cleanup()

    # -- the large user ---------------------------------------------------------
    if not args.skip_large and not args.ratios_only:
        memory = MemoryOS()
        user = "large-user"
        if args.load_large:
            saved = json.loads(args.load_large.read_text())
            t = time.perf_counter()
            memory.import_user(saved["export"], user_id=user)
            topics: list[int] = saved["topics"]
            results["large_build"] = saved["build"] | {"loaded_from": str(args.load_large)}
            log(f"loaded {user} from {args.load_large} (import_user) in {time.perf_counter() - t:.1f}s")
        else:
            log(
                f"building {user}: {large_pages} MTM pages over {args.large_threads} threads (progress every "
                f"{PROGRESS_EVERY} turns) ..."
            )
            res = feed(
                memory,
                user,
                dialogue(SEED + 3, threads=args.large_threads, prefix="L"),
                target_pages=large_pages,
                threads=args.large_threads,
                progress=True,
            )
            topics = res.topics
            info = {"result": res.summary()}
            if len(res.per_turn) >= 2 * PROGRESS_EVERY:
                info["early_vs_late_ms"] = {
                    "first": statistics.median(res.per_turn[:PROGRESS_EVERY]) * 1000,
                    "last": statistics.median(res.per_turn[-PROGRESS_EVERY:]) * 1000,
                }
            results["large_build"] = info
            if args.save_large:
                args.save_large.write_text(
                    json.dumps(
                        {"export": memory.export_user(user_id=user), "topics": topics, "build": info}, default=str
                    )
                )
                log(f"  saved {user} to {args.save_large} (export_user)")
        st = memory.stats(user_id=user)
        results["large_build"]["stats"] = vars(st)
        log(
            f"  stats(): segments={st.segments} mtm_pages={st.mtm_pages} stm_pages={st.stm_pages} "
            f"user_facts={st.user_facts}"
        )
        if st.mtm_pages < large_pages:
            log(f"  WARNING: only {st.mtm_pages} MTM pages reached (eviction dropped pages)")
        label = f"{st.mtm_pages} pages [InMemoryStore]"
        log(f"retrieve {label}: {args.warmup} warm-up + {args.queries} queries ...")
        r = measure_retrieval(label, memory, user, "chat-0", topics, args.queries, args.warmup, profiler)
        r["large"] = True
        log(
            f"  p50 {r['retrieve']['p50_ms']:.2f} ms  p95 {r['retrieve']['p95_ms']:.2f} ms  "
            f"(embed p50 {r['baseline_embed_query']['p50_ms']:.2f} ms)"
        )
        results["retrieval"].append(r)

    results["environment"]["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print_report(results)
    if profiler.reports:
        results["profiles"] = profiler.reports
        for name, text in profiler.reports.items():
            log(f"\n##### cProfile: {name} #####\n{text}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, default=str))
        log(f"wrote {args.json}")
    return 0


def _take(it: Iterator[Turn], n: int) -> Iterator[Turn]:
    for _ in range(n):
        yield next(it)


if __name__ == "__main__":
    sys.exit(main())
