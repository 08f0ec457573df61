import { STOP_WORDS } from "../../core/text.ts";
import type { Domain } from "./context.ts";

/**
 * One everyday subject a companion talks about. Words are compared by their Porter stem
 * (so "sleeping", "sleeps" and "sleep" meet), `exact` words by their surface form (for
 * words whose stem collides with another subject: "meetings" is work, "meet up" is social),
 * phrases as runs of stems (so "working out" is movement, not work), emoji as they are.
 */
export interface TopicEntry {
  readonly topic: string;
  readonly domain: Domain;
  readonly words: readonly string[];
  readonly exact?: readonly string[];
  readonly phrases?: readonly string[];
  readonly emoji?: readonly string[];
  /**
   * Nouns that name one thing to follow up on (an interview, a wedding): shown as the person's
   * own words, which still belong to this subject when a change of subject is judged.
   */
  readonly events?: readonly string[];
}

/**
 * The subjects of a daily companion, each a canonical label with its domain. Kept as data
 * so a new subject is one entry; the order matters only when two subjects claim the same
 * phrase (the first wins).
 */
export const TOPIC_LEXICON: readonly TopicEntry[] = [
  {
    topic: "hydration",
    domain: "habits",
    words: [
      "hydrate",
      "hydration",
      "dehydrated",
      "thirsty",
      "thirst",
      "drink",
      "drank",
      "sip",
      "fluids",
      "electrolytes",
      "ml",
      "tea",
      "bottle",
    ],
    // "water" as written: its stem would claim "watered her roses".
    exact: ["water", "glass", "glasses", "liter", "liters", "litre", "litres"],
    phrases: ["water intake", "fluid intake", "how much have you drunk"],
    emoji: ["💧", "🚰", "🥤", "🫗", "🥛", "🍵"],
  },
  {
    topic: "sleep",
    domain: "habits",
    words: [
      "sleep",
      "slept",
      "asleep",
      "sleepy",
      "bed",
      "bedtime",
      "nap",
      "insomnia",
      // Tiredness is also their mood (tone.ts); as a subject it is what "how did you sleep?" asks after.
      "tired",
      "wake",
      "woke",
      "waking",
      "awake",
      "dream",
      "snooze",
      "alarm",
      "oversleep",
      "overslept",
    ],
    phrases: ["early night", "stayed up", "stay up", "up early", "all nighter", "lie in"],
    emoji: ["😴", "🛌", "💤", "🥱"],
  },
  {
    topic: "food",
    domain: "habits",
    words: [
      "food",
      "eat",
      "eaten",
      "meal",
      "breakfast",
      "brunch",
      "lunch",
      "dinner",
      "supper",
      "snack",
      "hungry",
      "hunger",
      "cook",
      "recipe",
      "protein",
      "calories",
      "diet",
      "salad",
      "veggies",
      "vegetables",
      "fruit",
      "sugar",
      "carbs",
      "omad",
      "toast",
      "sandwich",
      "pancake",
      "soup",
      "pasta",
      "pizza",
      "burger",
      "noodles",
      "cereal",
      "porridge",
      "oatmeal",
      "takeaway",
      "rice",
      "bread",
      "eggs",
    ],
    exact: ["ate", "fasting", "fasted"],
    phrases: [
      "eating window",
      "feeding window",
      "window opens",
      "window closes",
      "break the fast",
      "break my fast",
      "break your fast",
    ],
    emoji: ["🍳", "🥗", "🍎", "🍕", "🍝", "🥑", "🍽", "🥪", "🍔"],
  },
  {
    topic: "movement",
    domain: "habits",
    words: [
      "exercise",
      "workout",
      "gym",
      "walk",
      "steps",
      "jog",
      "jogging",
      "yoga",
      "stretch",
      "swim",
      "swimming",
      "bike",
      "cycling",
      "hike",
      "hiking",
      "squats",
      "deadlift",
      "pushups",
      "sport",
      "tennis",
      "football",
      "soccer",
      "pilates",
      "cardio",
      "treadmill",
      "run",
      "runner",
      "5k",
      "10k",
    ],
    phrases: ["work out", "get moving", "move your body", "moved my body"],
    emoji: ["🏃", "🚶", "🏋", "🧘", "🚴", "🏊", "💪", "⚽", "🎾"],
  },
  {
    topic: "mood",
    domain: "reflective",
    // The person's feelings are a fact of their own (mood, in tone.ts); as a subject of talk,
    // only when the talk is about how they feel. Matched as written: their stems ("feel",
    // "emot") would claim "legs feel heavy" or "you're making me emotional".
    words: [],
    exact: ["mood", "moods", "feelings", "emotions", "headspace"],
    phrases: [
      "how are you feeling",
      "how do you feel",
      "how you feel",
      "how you're feeling",
      "mental health",
      "head space",
      "good place",
      "rough day",
      "bad day",
    ],
    // Not 😭 or 🥲: people send them as often for being moved or laughing as for sorrow.
    emoji: ["😔", "😞", "😢", "😟", "😰"],
  },
  {
    topic: "work",
    domain: "work",
    words: [
      "work",
      "job",
      "office",
      "boss",
      "project",
      "deadline",
      "client",
      "colleague",
      "coworker",
      "career",
      "report",
      "deploy",
      "coding",
      "sprint",
      "standup",
      "workday",
      "overtime",
      "shift",
      "startup",
      "proposal",
    ],
    // As written: "manager" stems to "manag", which would claim "I can manage my own sleeping".
    // Email is not work's alone ("emailed the landlord"), so it names no subject.
    exact: ["meeting", "meetings", "team", "manager", "managers"],
    phrases: ["deep work", "pull request", "performance review"],
    emoji: ["💻", "📊", "📈", "🗂"],
    events: ["interview", "presentation", "launch", "promotion", "review"],
  },
  {
    topic: "social",
    domain: "social",
    words: ["friend", "gathering", "guests", "bar", "pub", "hangout"],
    exact: ["drinks"],
    phrases: [
      "date night",
      "hang out",
      "hanging out",
      "meet up",
      "catch up",
      "go out",
      "going out",
      "grab a drink",
      "grab coffee",
      "coffee with",
      "dinner with",
      "lunch with",
      "weekend plans",
      "plans tonight",
      "plans for tonight",
      "plans this weekend",
      "any plans",
      "game night",
      "movie night",
    ],
    // Not 🎉 or 🥂: people send them for any good news, alone as often as in company.
    emoji: ["🍻", "🎂", "🥳"],
    events: ["party", "birthday", "wedding", "concert", "festival", "barbecue", "bbq", "reunion"],
  },
  {
    topic: "health",
    domain: "health",
    words: [
      "health",
      "doctor",
      "sick",
      "ill",
      "illness",
      "flu",
      "fever",
      "headache",
      "migraine",
      "pain",
      "hurt",
      "hurts",
      "injury",
      "injured",
      "medication",
      "meds",
      "pill",
      "pills",
      "symptoms",
      "dentist",
      "covid",
      "allergy",
      "allergies",
      "nausea",
      "nauseous",
      "hospital",
      "physio",
      "vitamins",
      "supplements",
      "blood",
      "knee",
      "cough",
      "sore",
      "clinic",
      "prescription",
      "therapy",
      "therapist",
    ],
    phrases: ["back pain", "blood pressure", "feel sick", "feeling sick", "under the weather", "check up"],
    emoji: ["🤒", "🤧", "💊", "🤕", "🩺", "🤢"],
    events: ["checkup", "appointment", "surgery", "operation", "scan", "results"],
  },
  {
    topic: "family",
    domain: "relationships",
    words: [
      "family",
      "mom",
      "mum",
      "mother",
      "dad",
      "father",
      "parents",
      "sister",
      "brother",
      "sibling",
      "son",
      "daughter",
      "kids",
      "children",
      "child",
      "baby",
      "wife",
      "wives",
      "husband",
      "partner",
      "grandma",
      "grandpa",
      "grandmother",
      "grandfather",
      "aunt",
      "uncle",
      "cousin",
      "girlfriend",
      "boyfriend",
      "fiance",
      "fiancee",
      "nephew",
      "niece",
    ],
    phrases: ["in laws", "my folks"],
    emoji: ["👨‍👩‍👧", "👪", "👶"],
  },
  {
    topic: "money",
    domain: "work",
    words: [
      "money",
      "budget",
      "rent",
      "bill",
      "bills",
      "salary",
      "spend",
      "spent",
      "spending",
      "expense",
      "expenses",
      "debt",
      "loan",
      "bank",
      "tax",
      "taxes",
      "mortgage",
      "price",
      "cost",
      "afford",
      "cash",
      "bucks",
      "euros",
      "dollars",
      "finances",
      "financial",
      "invest",
      "investment",
      "paycheck",
      "payday",
      "broke",
      "pricey",
      "expensive",
    ],
    // As written: "savings" stems to "save" ("saving the ending"), "invoice" to what a colleague's
    // "invoicing system" is (work, not their money).
    exact: ["savings", "invoice", "invoices"],
    emoji: ["💰", "💸", "💵", "💶", "💳"],
  },
  {
    topic: "learning",
    domain: "reflective",
    words: [
      "learn",
      "learning",
      "study",
      "studying",
      "lesson",
      "lessons",
      "practice",
      "practise",
      "skill",
      "tutorial",
      "homework",
      "lecture",
      "teach",
      "school",
      "university",
      "class",
      "classes",
      "duolingo",
      "vocabulary",
      "grammar",
      "certificate",
      "textbook",
    ],
    exact: ["course", "courses"],
    phrases: ["online course"],
    emoji: ["📚", "📖", "🎓", "✏"],
    events: ["exam", "recital", "audition", "thesis"],
  },
  {
    topic: "rest",
    domain: "health",
    words: [
      "rest",
      "relax",
      "relaxing",
      "relaxed",
      "downtime",
      "chill",
      "chilling",
      "recharge",
      "unwind",
      "lazy",
      "burnout",
      "burned",
      "burnt",
      "meditate",
      "meditation",
      "sabbatical",
      "bath",
      "sofa",
      "couch",
      "netflix",
    ],
    phrases: [
      "a break",
      "proper break",
      "short break",
      "coffee break",
      "day off",
      "time off",
      "take it easy",
      "taking it easy",
      "me time",
      "do nothing",
      "doing nothing",
    ],
    emoji: ["🛀", "🏖", "🌴", "🛋"],
    events: ["vacation", "holiday", "trip", "retreat"],
  },
];

/**
 * Everyday phrases whose words belong to a subject but whose meaning does not ("of
 * course", "running late"). They are consumed before subjects are looked up.
 */
export const IDIOMS: readonly string[] = [
  "of course",
  // Phrasal verbs whose "up" would read as "up early" (sleep): "showed up early to the interview".
  "show up",
  "turn up",
  "sign up",
  "wrap up",
  "end up",
  // Toast and takeaways that are no food.
  "i'm toast",
  "we're toast",
  "raise a toast",
  "key takeaway",
  "main takeaway",
  "running late",
  "run late",
  "ran late",
  "run out of time",
  "worked out fine",
  "work out fine",
  "works for me",
  "work for me",
  "give me a break",
  "break the ice",
  "feel free",
  "feel like",
  "water under the bridge",
  "sounds good",
  "good call",
  "take care",
  "fast forward",
  "fast track",
  "last minute",
  "good night",
  "night night",
  "sleep well",
  "sweet dreams",
  "good morning",
  "in the mood",
  "feel like",
  "brand new",
  "in knots",
  "lunch break",
  // Work as in function: "it worked!", "that doesn't work".
  "it work",
  "didn't work",
  "doesn't work",
  "won't work",
  "no notes",
  "on purpose",
  "deep breath",
  "my fault",
  "your fault",
  // A rehearsal, not exercise.
  "test run",
  "dry run",
  "trial run",
  // An alarm that guards a building, not one that wakes them ("fire alarm" is a compound of its own).
  "set off the alarm",
  "set off an alarm",
  "set the alarm off",
  // Where someone lives or is, said as a place adverb: "from next door", "back next door".
  "next door",
];

/**
 * Words that never name a subject on their own: the shared function words and the small
 * talk of chat. The fallback skips them when it looks for what an unknown subject is about.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  ...STOP_WORDS,
  ...`a above after against almost already although always am among an another anyone anything anyway anyways
  around as at away back be because before below between by cannot do done down during either else enough
  even ever every everything few further get gets getting give go goes going gone good got great having
  hers herself himself however i if in is it itself keep kind know known last later least less let like
  little lot lots made make makes making may maybe me might mine must my myself need needs never new next
  nice no nor nothing now of often oh ok okay on one or other ours ourselves part pretty quite rather
  right said say says see seem seems since so something sometimes soon still sure take tell thank thanks
  theirs themselves these thing things think those though through thus till to today tomorrow tonight took
  toward try trying until up upon us want wanted way we well went whatever whether while whose within
  without yeah yep yes yet yourself yourselves hey hi hello morning afternoon evening night day days week
  weeks time times minute minutes hour hours looking look looks done how's what's that's i'd you've you'll
  don't doesn't didn't can't couldn't won't wouldn't shouldn't isn't aren't wasn't weren't haven't hasn't
  hadn't let's there's here's gonna wanna gotta lol haha hahaha hmm hm mhm ugh wow cool awesome fine sorry
  please stuff guess mean means feel feeling going went come came coming tell told ask asked seems seemed
  able quick quickly bit actually probably definitely totally literally basically honestly today's
  yesterday currently first second third start started starting end ended finish finished reminder remind
  reminding message messages question questions idea ideas chat talk talking talked problem problems
  behind beside besides across along among inside outside ahead instead everyone everybody someone
  somebody somewhere anywhere nowhere everywhere enjoy glad wish hope hoping`.split(/\s+/),
]);

/**
 * Nouns that are never what a message is about, beyond the STOPWORDS above: more time words,
 * chat abbreviations, units, forms of address, body parts named in passing. A noun phrase is
 * never built on them.
 */
export const NOT_TOPICS: ReadonlySet<string> = new Set(
  `weekend weekday noon midnight month year min mins sec moment monday tuesday wednesday thursday
  friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays january
  february march april june july august september october november december pm omg tbh idk lmao btw
  imo ngl rn fyi asap thx pls plz ty tysm gn gm xx xo xoxo hug hugs yay bye goodnight guys guy folks
  dude man bro girl hun babe buddy mate sense point fact case chance news update luck fun mess deal
  shape mode list top answer reply text sort type ton tons bunch couple half people person nope hehe
  love hr hrs mile miles km kg lb lbs oz ish tmrw tmr ikr omw tho aaand idiot genius adult life wait
  jeez oye yolo face chest stomach brain leg legs elbow hand hands head eyes arm arms shoulder neck
  word words lowkey highkey fr ha hah lol lmfao hasnt wasnt isnt doesnt didnt couldnt shouldnt
  wouldnt arent werent aint havent mon tue tues thu thur thurs fri feb apr jul aug sept oct nov dec
  aloha ciao hola salut servus tonite nite em season seasons spring summer autumn winter god lord`.split(
    /\s+/,
  ),
);
