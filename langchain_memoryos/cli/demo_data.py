"""The demo's built-in conversation: one user, six dated sessions over five months.

The text is written for this project. It is shaped so that the offline
:class:`~langchain_memoryos.controllers.heuristic.HeuristicController` has
something to do in every tier:

* profile facts in natural first-person English (name, job, city, a dog);
* a move (Portland → Denver) and a changed preference (coffee → tea) that the
  AMU write path should treat as *updates*;
* the same facts repeated in later sessions, which AMU should *discard*;
* a hobby (climbing) that recurs until its topic segment gets hot and is
  promoted to long-term persona memory;
* a standing request to the assistant (an agent trait);
* small talk and purely task-oriented requests, which carry no fact.

Each session runs in its own thread. Short-term memory is per thread (seven
pages by default), so only the turns beyond a session's last seven leave STM
for mid-term memory (each turn's facts are written when it is added); the
facts come early in each session and the small talk at its end.

Example:
    >>> sum(len(s["turns"]) for s in SESSIONS) >= 40
    True
    >>> SESSIONS[0]["date"]
    '2024-03-02T10:00:00'
"""

from __future__ import annotations

from typing import Final, TypedDict

__all__ = ["FACT_PROBE", "PROBES", "SESSIONS", "TURN_GAP_MINUTES", "USER_ID", "Probe", "Session", "Turn"]

#: One exchange: (what the user said, what the assistant answered).
Turn = tuple[str, str]


class Session(TypedDict):
    """One dated conversation.

    Attributes:
        date: ISO-8601 start time of the session; turn ``i`` (from 0) happens
            ``i * TURN_GAP_MINUTES`` minutes later.
        turns: the exchanges, in order.

    Example:
        >>> from langchain_memoryos.cli.demo.results import turn_timestamp
        >>> s: Session = {"date": "2024-01-01T09:00:00", "turns": [("Hi", "Hello"), ("I'm Maya.", "Hi Maya!")]}
        >>> [turn_timestamp(s, i).strftime("%H:%M") for i in range(len(s["turns"]))]
        ['09:00', '09:03']
    """

    date: str
    turns: list[Turn]


class Probe(TypedDict):
    """A question about an early session and what retrieval should surface.

    Attributes:
        question: what the user asks, long after the fact was said.
        expected: substrings (case-insensitive) that the retrieved context must
            all contain for the probe to count as a hit.
        about: where the answer was said, for the report.

    Example:
        >>> said = " ".join(f"{u} {a}" for s in SESSIONS for u, a in s["turns"]).lower()
        >>> all(x.lower() in said for p in PROBES for x in p["expected"])  # every answer was said
        True
    """

    question: str
    expected: tuple[str, ...]
    about: str


#: The demo user.
USER_ID: Final[str] = "maya"

#: Minutes between two turns of one session.
TURN_GAP_MINUTES: Final[int] = 3

SESSIONS: Final[list[Session]] = [
    {
        # Session 1: introductions; Portland, nurse, dog, climbing, coffee.
        "date": "2024-03-02T10:00:00",
        "turns": [
            (
                "Hi, my name is Maya. I work as a nurse, on the children's ward at Providence Hospital.",
                "Nice to meet you, Maya! Paediatric nursing is demanding work. What can I help you with?",
            ),
            (
                "I live in Portland. I have a dog named Biscuit.",
                "Portland is a great city for dogs. What kind of dog is Biscuit?",
            ),
            (
                "I love rock climbing. I go bouldering at a gym downtown three times a week.",
                "Bouldering three times a week is a solid routine. How long have you been climbing?",
            ),
            (
                "About two years now. My favorite climbing spot is Smith Rock, I drive there every spring.",
                "Smith Rock is a classic: volcanic tuff and long sport routes. Do you lead or top-rope there?",
            ),
            (
                "I like coffee a lot. I drink two cups of dark roast every morning before my shift.",
                "Dark roast coffee before a long shift sounds like a well-earned ritual.",
            ),
            (
                "Biscuit is a beagle, three years old, and he sniffs absolutely everything on our walks in Portland.",
                "That is very beagle of him. Your walks must take twice as long.",
            ),
            (
                "My climbing shoes are falling apart, the rubber on the toes is worn through.",
                "Worn toe rubber can often be resoled, which is cheaper than new shoes.",
            ),
            (
                "Can you suggest a quick warm-up routine before a bouldering session?",
                "Five minutes of easy cardio, arm circles, then a few very easy problems, adding grade slowly.",
            ),
            (
                "What grade should I aim for after two years of bouldering?",
                "Many climbers reach V3 to V5 after two years of regular sessions; progress varies a lot.",
            ),
            (
                "My shifts are twelve hours long, so I climb on my days off.",
                "That makes sense. Rest days between shifts and climbing will help you recover.",
            ),
            (
                "Can you recommend a movie for tonight?",
                "How about a light comedy to unwind, or a climbing documentary if you want some inspiration?",
            ),
            ("haha thanks, a comedy it is", "Enjoy it! A good laugh after a long week helps."),
            ("ok see you", "See you, Maya! Say hi to Biscuit."),
        ],
    },
    {
        # Session 2: climbing progress; the same facts repeated (duplicates).
        "date": "2024-03-16T19:30:00",
        "turns": [
            (
                "Hey, it's Maya again. I finally sent my first V4 at the bouldering gym!",
                "Congratulations on your first V4! What was the problem like?",
            ),
            (
                "I still like coffee a lot. I always drink two cups in the morning, even on my days off.",
                "Two cups of coffee in the morning: your ritual holds steady.",
            ),
            (
                "Work was hectic this week. I work as a nurse, and we were short-staffed at the hospital.",
                "Short-staffed shifts at the hospital are hard. I hope you get some rest.",
            ),
            (
                "I still live in Portland. I walk Biscuit along the river every evening.",
                "Evening walks by the river sound lovely for both of you.",
            ),
            (
                "I love rock climbing, it clears my head after work. Bouldering is my favourite way to relax.",
                "It is great that climbing helps you switch off.",
            ),
            (
                "I want to train finger strength for climbing without hurting my tendons.",
                "Start with a hangboard on big edges, short hangs, long rests, and only twice a week.",
            ),
            (
                "Can you give me a simple hangboard plan?",
                "Weeks 1-4: 7 seconds on, 3 off, six reps, three sets on a 20 mm edge, twice a week.",
            ),
            (
                "What should I eat before an evening session?",
                "A light meal two hours before: rice, vegetables and some protein work well.",
            ),
            (
                "Can you recommend a podcast for my commute?",
                "Try a science podcast with short episodes, or a storytelling one for the drive home.",
            ),
            ("haha that's perfect, thanks", "Happy listening!"),
            ("Any tips for keeping my chalk bag from spilling?", "Use a chalk ball inside the bag."),
            ("ok cool", "Anything else for today?"),
            ("nope, see you soon", "See you soon, Maya!"),
        ],
    },
    {
        # Session 3: work, the dog, coffee again; climbing outdoors.
        "date": "2024-04-06T08:15:00",
        "turns": [
            (
                "I work as a nurse, and this week I had three night shifts in a row at the hospital.",
                "Three night shifts in a row is exhausting. Are you getting some rest now?",
            ),
            (
                "Yes, I'm off now. I'm taking Biscuit to the dog park in Portland first.",
                "A morning at the dog park will do you both good.",
            ),
            (
                "I love coffee, and after those night shifts I really needed my two cups this morning.",
                "After three nights, that coffee was well deserved.",
            ),
            (
                "I'm trying to climb outdoors more this spring, on real rock instead of plastic.",
                "Outdoor climbing in spring is a treat. Smith Rock should be in good condition soon.",
            ),
            (
                "My climbing partner Jess wants to try lead climbing with me at Smith Rock in May.",
                "Leading outdoors with a partner you trust is a great next step. Practise clipping first.",
            ),
            (
                "I love rock climbing more every month. Bouldering at the gym keeps me strong for the rock.",
                "It shows! Climbing clearly gives you a lot.",
            ),
            (
                "How do I practise lead falls safely?",
                "Start indoors with a certified instructor, small falls above the bolt, and an attentive belayer.",
            ),
            (
                "Can you write a short packing list for a day at the crag?",
                "Rope, harness, shoes, chalk, quickdraws, helmet, belay device, water, snacks, first-aid kit.",
            ),
            (
                "What's the weather usually like in central Oregon in May?",
                "Mild and dry: mid-60s to low 70s Fahrenheit during the day, cool nights.",
            ),
            ("thanks! super helpful", "Glad it helps. Have fun out there."),
            ("Remind me what a quickdraw is?", "Two carabiners joined by a sling: one clips the bolt, one the rope."),
            ("haha right, I knew that", "Of course you did!"),
            ("ok bye", "Bye, Maya! Enjoy the dog park."),
        ],
    },
    {
        # Session 4: the move to Denver; a standing request to the assistant.
        "date": "2024-05-18T17:45:00",
        "turns": [
            (
                "I moved to Denver last month! I live in Denver now. Biscuit finally has a yard.",
                "Congratulations on the move! A yard for Biscuit is a big upgrade. How are you settling in?",
            ),
            (
                "I work as a nurse at Denver Health now, still on a children's ward.",
                "A new hospital but the same specialty. How is the new team?",
            ),
            (
                "From now on, please keep your answers short. I read your answers on my phone at the climbing gym.",
                "Understood: short answers from now on, even about climbing.",
            ),
            (
                "I found a new bouldering gym in Denver and I already love the climbing there.",
                "Nice. New gym, new problems.",
            ),
            (
                "I want to go rock climbing in Clear Creek Canyon this summer.",
                "Good choice. Lots of sport routes, close to town.",
            ),
            (
                "Biscuit loves the new park near our house in Denver, he chases squirrels all day.",
                "Sounds like he has settled in too.",
            ),
            ("Can you recommend a movie for tonight?", "Try a feel-good comedy."),
            ("What's a good climbing guidebook for Colorado?", "Look for a Front Range sport climbing guide."),
            ("haha yes he does", "Happy dog, happy home."),
            ("How long does it take to adjust to the altitude?", "Usually one to two weeks. Drink plenty of water."),
            ("ok thanks", "Anytime."),
            ("see you", "See you, Maya!"),
        ],
    },
    {
        # Session 5: coffee → tea; climbing outdoors in Colorado.
        "date": "2024-06-22T09:10:00",
        "turns": [
            (
                "I've switched to tea. I don't like coffee anymore.",
                "Noted: tea, not coffee. Was the coffee too strong?",
            ),
            (
                "Coffee made me jittery at work. I prefer green tea in the morning now.",
                "Green tea it is.",
            ),
            (
                "I went rock climbing in Clear Creek Canyon last weekend and led my first outdoor route!",
                "Congrats on your first outdoor lead!",
            ),
            (
                "I love rock climbing outdoors even more than bouldering in the gym.",
                "Real rock is hard to beat.",
            ),
            (
                "I still work as a nurse at Denver Health, and the hospital team is great.",
                "Glad the new job is going well.",
            ),
            ("Can you suggest a green tea that isn't too bitter?", "Try a Japanese sencha, steeped at 70°C."),
            ("How long should I steep it?", "About one to two minutes."),
            ("What's a good stretch for tight forearms after climbing?", "Wrist flexor stretch, 30 seconds each arm."),
            ("haha my forearms are on fire", "Rest day tomorrow, then."),
            ("Can you set a reminder to buy new climbing shoes?", "I can't set reminders, but note: buy shoes."),
            ("ok thanks", "You're welcome."),
            ("bye!", "Bye, Maya!"),
        ],
    },
    {
        # Session 6: a short check-in; its short-term memory is shown by the demo.
        "date": "2024-08-10T18:00:00",
        "turns": [
            (
                "Hi again! Jess visited me in Denver and we went rock climbing in Eldorado Canyon.",
                "Fun! How was Eldorado?",
            ),
            (
                "Scary but amazing, the rock is so smooth. I love rock climbing in Colorado.",
                "Glad you enjoyed it.",
            ),
            ("My name is Maya, by the way, in case the new app forgot.", "I remember, Maya."),
            ("I live in Denver now and Biscuit is loving the mountains.", "Happy dog."),
            ("Can you recommend a movie for tonight?", "A light comedy."),
            ("haha thanks", "Enjoy."),
            ("What's a good dinner after a long climbing day?", "Pasta with vegetables and chicken."),
            ("ok see you", "See you, Maya!"),
        ],
    },
]

#: Questions about the first sessions, asked after all six sessions.
PROBES: Final[list[Probe]] = [
    {"question": "Where did I live before I moved?", "expected": ("Portland",), "about": "S1: I live in Portland"},
    {"question": "What's my job?", "expected": ("nurse",), "about": "S1: I work as a nurse"},
    {
        "question": "What did I use to drink in the morning?",
        "expected": ("coffee",),
        "about": "S1: two cups of dark roast",
    },
    {"question": "What's my dog called?", "expected": ("Biscuit",), "about": "S1: a dog named Biscuit"},
    {
        "question": "Which climbing spot did I say was my favorite?",
        "expected": ("Smith Rock",),
        "about": "S1: favorite spot Smith Rock",
    },
]

#: The question about a fact AMU updated (Portland → Denver), asked after the last session.
FACT_PROBE: Final[Probe] = {
    "question": "Where do I live now?",
    "expected": ("Denver",),
    "about": "S4:1: I moved to Denver",
}
