/**
 * Warmup mail's words (CONTRACT 19.4): short person-to-person notes assembled from a maintained
 * corpus (a subject, an opening, one or two sentences, a closing), so no two mailboxes send one
 * template. Plain text, with a simple HTML twin; no links, pixel, attachment or unsubscribe. Each
 * ends with the mailbox's identifier (`warmup_key_id`) so users can filter it. Choices are stable
 * per Message-ID, so a message composed again reads the same.
 */
import { stableHash } from "../sequences/hash";
import { escapeHtml } from "../sequences/template";

const SUBJECTS = [
  "Quick question about next week",
  "Following up on our chat",
  "Notes from today",
  "Lunch on Thursday?",
  "The plan for the offsite",
  "Thanks for the help",
  "Checking in",
  "About the schedule",
  "A thought on the proposal",
  "Weekend plans",
  "Coffee sometime?",
  "Update on the project",
  "Re-reading the brief",
  "Small favour",
  "That book you mentioned",
  "Ideas for the team meeting",
  "Travel next month",
  "Catching up",
  "The draft is ready",
  "Where did we land?",
];

const OPENINGS = ["Hi", "Hello", "Hey", "Good morning", "Hi there", "Morning"];

const SENTENCES = [
  "I hope your week is going well so far.",
  "I was thinking about what you said on Monday and I agree with most of it.",
  "Could we move our call to later in the afternoon?",
  "The numbers look better than I expected, which is a nice surprise.",
  "I finally finished the draft and I am fairly happy with it.",
  "Let me know if Thursday still works for you.",
  "I ran into Sam yesterday and he says hello.",
  "The new schedule seems to suit everyone on the team.",
  "I found the notes from last time, so we do not need to start over.",
  "Would you mind having a look at the second section when you have a moment?",
  "It has been raining all week here, so I have mostly stayed inside.",
  "I tried the place you recommended and the food was excellent.",
  "We should plan something before the end of the month.",
  "I am still reading the book you lent me and enjoying it.",
  "No rush on this, whenever suits you is fine.",
  "I think we are close to a decision on the venue.",
  "The train was late again this morning, but I made it in time.",
  "Thanks again for sorting that out so quickly.",
  "I added a few comments, mostly small wording changes.",
  "Tell me what you think and we can take it from there.",
];

const CLOSINGS = ["Thanks", "Best", "Cheers", "Talk soon", "All the best", "Speak soon", "Many thanks", "Kind regards"];

const REPLIES = [
  "Thanks for your note, that sounds good to me.",
  "Great, thank you for letting me know.",
  "Sounds like a plan. I will follow up later this week.",
  "Thanks! I will take a look and get back to you.",
  "Good to hear from you. Thursday works for me.",
  "Appreciate it. Let us talk more soon.",
  "That makes sense, thanks for explaining.",
  "Perfect, I will keep an eye out for it.",
];

const WORDS = [
  "amber", "birch", "cedar", "delta", "ember", "fable", "grove", "harbor", "iris", "juniper", "kestrel", "lumen", "maple",
  "nectar", "orbit", "pebble", "quartz", "raven", "sable", "tundra", "umber", "velvet", "willow", "zephyr", "aspen", "brook",
  "coral", "dune", "fjord", "glade", "heron", "indigo", "lark", "meadow", "north", "onyx", "prairie", "ridge", "summit", "tide",
];

function pick<T>(list: readonly T[], seed: string): T {
  return list[stableHash(seed) % list.length]!;
}

/** A new `warmup_key_id`: two lowercase words joined by `-` (the hosted two-word tag). */
export function newWarmupKey(random: () => number = Math.random): string {
  const first = WORDS[Math.floor(random() * WORDS.length)]!;
  let second = WORDS[Math.floor(random() * WORDS.length)]!;
  if (second === first) second = WORDS[(WORDS.indexOf(first) + 1) % WORDS.length]!;
  return `${first}-${second}`;
}

export interface WarmupContent {
  subject: string;
  text: string;
  html: string;
}

function htmlOf(paragraphs: string[]): string {
  return paragraphs.map((p) => `<p>${escapeHtml(p).replace(/\n/g, "<br>")}</p>`).join("\n");
}

/** A first warmup email from `fromName` to `toName`, its words chosen by the Message-ID, ending with the identifier. */
export function warmupEmail(messageId: string, fromName: string, toName: string, identifier: string): WarmupContent {
  const count = 1 + (stableHash(`count:${messageId}`) % 2);
  const sentences: string[] = [];
  for (let i = 0; sentences.length < count && i < 8; i++) {
    const sentence = pick(SENTENCES, `sentence:${messageId}:${i}`);
    if (!sentences.includes(sentence)) sentences.push(sentence);
  }
  const greeting = `${pick(OPENINGS, `open:${messageId}`)} ${firstName(toName)},`;
  const closing = `${pick(CLOSINGS, `close:${messageId}`)},\n${firstName(fromName)}`;
  const paragraphs = [greeting, sentences.join(" "), closing, identifier];
  return { subject: pick(SUBJECTS, `subject:${messageId}`), text: paragraphs.join("\n\n"), html: htmlOf(paragraphs) };
}

/** A reply in the thread of `subject`, ending with the replier's identifier. */
export function warmupReply(messageId: string, subject: string, fromName: string, toName: string, identifier: string): WarmupContent {
  const paragraphs = [`${pick(OPENINGS, `open:${messageId}`)} ${firstName(toName)},`, pick(REPLIES, `reply:${messageId}`), `${pick(CLOSINGS, `close:${messageId}`)},\n${firstName(fromName)}`, identifier];
  return { subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`, text: paragraphs.join("\n\n"), html: htmlOf(paragraphs) };
}

function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] || "there";
}

