// The development sets of bench/retrieval.ts, read into one shape: conversations of turns (a BEAM
// message or a RealMem turn), each turn in a session, and questions whose evidence is given as turn
// ids and session ids. Built as /work/shared/devsets/README.md says; never committed.
import { readFile } from 'node:fs/promises';

export type SetKey = 'beam100k' | 'beam500k' | 'realmem';

/** One turn as every system sees it. */
export interface Turn {
  id: string;
  /** The session that holds it. */
  session: string;
  /** Its index in the conversation, in file order. */
  position: number;
  /** "<role>: <text>", truncated to what the API takes. */
  text: string;
  validFrom: Date;
}

export interface Conversation {
  id: string;
  turns: Turn[];
}

export interface Question {
  qid: string;
  category: string;
  text: string;
  conversation: Conversation;
  /** Turn ids; empty when the set labels no evidence turn (the question then counts at session level only). */
  evidence: ReadonlySet<string>;
  evidenceSessions: ReadonlySet<string>;
  /** Only the conversation's first `visible` turns may be found: for RealMem those before the asking session, for BEAM all. */
  visible: number;
  /** RealMem: one millisecond before the asking session's first turn (every system searches validFrom <= asOf). */
  asOf?: Date;
  /** When the question is asked, for its words about time: RealMem, the asking session's date; BEAM, a day after the conversation's last message. */
  referenceTime: Date;
}

export interface DevSet {
  key: SetKey;
  title: string;
  path: string;
  source: string;
  conversations: Conversation[];
  /** The questions to search (BENCH_QUESTIONS applied). */
  questions: Question[];
  turnCount: number;
  /** Turns longer than MAX_CONTENT, truncated for every system. */
  truncated: number;
  /** Questions of the loaded conversations, before BENCH_QUESTIONS. */
  questionCount: number;
  /** Of those, questions without evidence (skipped). */
  withoutEvidence: number;
  /** What the loader had to decide, for the output. */
  notes: string[];
}

export interface Limits {
  conversations?: number;
  questions?: number;
}

/** The API refuses longer content; the baselines see the same truncated text. */
export const MAX_CONTENT = 20_000;
/** For BEAM messages with no date of their own, so validFrom is still in the past and in order. */
const FALLBACK_DATE = Date.UTC(2024, 0, 1);

/** By code points, as the API's maxLength counts. */
function truncate(text: string): { text: string; truncated: boolean } {
  if (text.length <= MAX_CONTENT) return { text, truncated: false };
  const points = Array.from(text);
  return points.length <= MAX_CONTENT ? { text, truncated: false } : { text: points.slice(0, MAX_CONTENT).join(''), truncated: true };
}

// ---------------------------------------------------------------------------------------------
// BEAM (beam.py's output)

type MessageId = number | string;
interface BeamFile {
  source: string;
  conversations: {
    conversation_id: string;
    sessions: { session_id: string; time_anchor: string | null; messages: { id: MessageId; role: string; content: string; time_anchor?: string | null }[] }[];
    questions: { qid: string; category: string; question: string; evidence_message_ids: MessageId[]; evidence_session_ids?: string[] }[];
  }[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** BEAM dates look like `March-15-2024`; anything else is no date. */
function parseAnchor(anchor: string | null | undefined): number | undefined {
  const match = /^([A-Za-z]+)-(\d{1,2})-(\d{4})$/.exec(anchor?.trim() ?? '');
  const month = match ? MONTHS.indexOf(match[1]!.toLowerCase()) : -1;
  return match && month >= 0 ? Date.UTC(Number(match[3]), month, Number(match[2])) : undefined;
}

export async function loadBeam(key: 'beam100k' | 'beam500k', path: string, limits: Limits): Promise<DevSet> {
  const data = JSON.parse(await readFile(path, 'utf8')) as BeamFile;
  if (!Array.isArray(data.conversations) || data.conversations[0]?.conversation_id === undefined) {
    throw new Error(`${path} is not a BEAM file built by beam.py`);
  }
  const size = key === 'beam100k' ? '100K' : '500K';
  if (!data.source.endsWith(`/${size}`)) throw new Error(`${path} was built from ${data.source}, not BEAM's chats/${size}`);
  const conversations: Conversation[] = [];
  const questions: Question[] = [];
  let truncated = 0;
  let questionCount = 0;
  let withoutEvidence = 0;
  let unplaced = 0;
  for (const raw of data.conversations.slice(0, limits.conversations)) {
    const conversation: Conversation = { id: raw.conversation_id, turns: [] };
    const sessionOf = new Map<string, string>();
    for (const session of raw.sessions) {
      // In BEAM the date comes on a session's first message; it holds for the rest of the session.
      let base = parseAnchor(session.time_anchor);
      for (const message of session.messages) {
        base = parseAnchor(message.time_anchor) ?? base;
        const cut = truncate(`${message.role}: ${message.content}`);
        if (cut.truncated) truncated++;
        // The position in seconds keeps the conversation's order among messages of one date.
        const position = conversation.turns.length;
        const id = String(message.id);
        sessionOf.set(id, session.session_id);
        conversation.turns.push({ id, session: session.session_id, position, text: cut.text, validFrom: new Date((base ?? FALLBACK_DATE) + position * 1000) });
      }
    }
    conversations.push(conversation);
    for (const q of raw.questions) {
      questionCount++;
      // Abstention questions (and a few others) have no evidence to find.
      if (q.evidence_message_ids.length === 0) {
        withoutEvidence++;
        continue;
      }
      const evidence = new Set(q.evidence_message_ids.map(String));
      // A message's session is the session that holds it (what beam.py writes as evidence_session_ids).
      const evidenceSessions = new Set([...evidence].flatMap((id) => sessionOf.get(id) ?? []));
      if ([...evidence].some((id) => !sessionOf.has(id))) unplaced++;
      const referenceTime = new Date(conversation.turns[conversation.turns.length - 1]!.validFrom.getTime() + 86_400_000);
      questions.push({ qid: q.qid, category: q.category, text: q.question, conversation, evidence, evidenceSessions, visible: conversation.turns.length, referenceTime });
    }
  }
  const notes = unplaced > 0 ? [`${unplaced} question(s) cite an evidence message id that no session holds.`] : [];
  return finish({ key, title: `BEAM ${size}`, path, source: data.source, conversations, questions, truncated, questionCount, withoutEvidence, notes }, limits);
}

// ---------------------------------------------------------------------------------------------
// RealMem (realmem.py's output)

interface RealMemFile {
  source: string;
  commit: string;
  license: string;
  conversations: { id: string; person: string; sessions: { id: string; date: string; turns: { id: string; role: string; text: string }[] }[] }[];
  questions: {
    id: string;
    conversationId: string;
    question: string;
    category: string;
    askedInSession: string;
    evidence: string[];
    evidenceSessions: string[];
  }[];
}

export async function loadRealMem(path: string, limits: Limits): Promise<DevSet> {
  const data = JSON.parse(await readFile(path, 'utf8')) as RealMemFile;
  if (!Array.isArray(data.conversations) || !Array.isArray(data.questions) || data.conversations[0]?.sessions === undefined) {
    throw new Error(`${path} is not a RealMem file built by realmem.py`);
  }
  const conversations = new Map<string, Conversation>();
  /** Session id -> its first turn's position and the position after its last (file order). */
  const spans = new Map<string, { conversation: Conversation; first: number; end: number }>();
  let truncated = 0;
  let steppedBack = 0;
  for (const raw of data.conversations.slice(0, limits.conversations)) {
    const conversation: Conversation = { id: raw.id, turns: [] };
    // Session dates step back now and then in file order; "before" is file order (as RealMem's own
    // evaluation has it), so the latest date so far is carried forward to keep validFrom increasing,
    // and the asOf cut at the asking session then holds exactly the sessions before it in the file.
    let base = -Infinity;
    for (const session of raw.sessions) {
      const date = Date.parse(`${session.date}T00:00:00Z`);
      if (!Number.isFinite(date)) throw new Error(`${path}: session ${session.id} has no date (${session.date})`);
      if (date < base) steppedBack++;
      base = Math.max(base, date);
      const first = conversation.turns.length;
      for (const turn of session.turns) {
        const cut = truncate(`${turn.role}: ${turn.text}`);
        if (cut.truncated) truncated++;
        // The turn's position in the conversation, in seconds, keeps validFrom strictly increasing.
        const position = conversation.turns.length;
        conversation.turns.push({ id: turn.id, session: session.id, position, text: cut.text, validFrom: new Date(base + position * 1000) });
      }
      spans.set(session.id, { conversation, first, end: conversation.turns.length });
    }
    conversations.set(conversation.id, conversation);
  }

  const questions: Question[] = [];
  let questionCount = 0;
  let withoutEvidence = 0;
  let citeOwnOrLater = 0;
  let noEarlierEvidence = 0;
  for (const q of data.questions) {
    const conversation = conversations.get(q.conversationId);
    if (!conversation) continue;
    questionCount++;
    const asking = spans.get(q.askedInSession);
    if (!asking || asking.conversation !== conversation) throw new Error(`${path}: question ${q.id} is asked in ${q.askedInSession}, not a session of ${q.conversationId}`);
    if (q.evidenceSessions.length === 0) {
      withoutEvidence++;
      continue;
    }
    const visible = asking.first;
    const earlier = q.evidenceSessions.filter((s) => (spans.get(s)?.end ?? Infinity) <= visible);
    if (earlier.length < q.evidenceSessions.length) citeOwnOrLater++;
    if (earlier.length === 0) noEarlierEvidence++;
    questions.push({
      qid: q.id,
      category: q.category,
      text: q.question,
      conversation,
      evidence: new Set(q.evidence),
      evidenceSessions: new Set(q.evidenceSessions),
      visible,
      asOf: new Date(conversation.turns[visible]!.validFrom.getTime() - 1),
      referenceTime: conversation.turns[visible]!.validFrom,
    });
  }
  const notes = [
    `Searches see only the sessions before the asking one in file order (asOf one millisecond before its first turn; the baselines index exactly those turns). ` +
      `${steppedBack} session(s) are dated before an earlier session of their conversation and take the latest earlier date instead, so validFrom increases through each conversation in file order.`,
    ...(citeOwnOrLater > 0
      ? [`${citeOwnOrLater} question(s) cite evidence in the asking session or later (out of reach; ${noEarlierEvidence} of them have no earlier evidence session at all).`]
      : []),
  ];
  return finish({ key: 'realmem', title: 'RealMem', path, source: `${data.source} ${data.commit.slice(0, 12)} (${data.license})`, conversations: [...conversations.values()], questions, truncated, questionCount, withoutEvidence, notes }, limits);
}

function finish(set: Omit<DevSet, 'turnCount'>, limits: Limits): DevSet {
  return { ...set, questions: set.questions.slice(0, limits.questions), turnCount: set.conversations.reduce((sum, c) => sum + c.turns.length, 0) };
}
