// Realistic conversation turns for the heuristic observe extractor, each with what it should save.
// `now` is fixed (Sunday 15 June 2025, noon UTC) so relative dates resolve the same way every run.
import type { MemoryType } from '../../../src/memory/extract/extract.js';

export const OBSERVE_NOW = new Date('2025-06-15T12:00:00.000Z');

export type TurnKind =
  | 'filler' | 'fact' | 'preference' | 'health' | 'correction' | 'consent' | 'rule' | 'event' | 'habit'
  | 'procedure' | 'multi' | 'assistant' | 'system' | 'list' | 'duplicate' | 'question' | 'request' | 'observation';

export interface ExpectedSave {
  /** A fragment the saved content contains (case-insensitive). */
  contains: string;
  type: MemoryType;
  /** The slot it fills; null when it must fill none; absent when not checked. */
  slot?: string | null;
  /** Checked only when given (every save is otherwise expected to be `correction: false`). */
  correction?: boolean;
  /** The calendar day (UTC) of `occurredAt`, when the statement names a date. */
  occurredOn?: string;
  /** Entities that must be among those spotted. */
  entities?: string[];
  /** A floor on importance, for what must rank high (health, consent, rules, corrections). */
  minImportance?: number;
}

export interface ObserveTurn {
  id: string;
  kind: TurnKind;
  role: 'user' | 'assistant' | 'system';
  text: string;
  /** Exactly these are saved, in this order; an empty list means filler (nothing saved). */
  saves: ExpectedSave[];
}

const user = (id: string, kind: TurnKind, text: string, saves: ExpectedSave[] = []): ObserveTurn => ({ id, kind, role: 'user', text, saves });

export const OBSERVE_CORPUS: ObserveTurn[] = [
  // Filler: nothing at all is saved.
  user('filler-ok-thanks', 'filler', 'ok thanks'),
  user('filler-lol', 'filler', 'lol'),
  user('filler-hi', 'filler', 'hi'),
  user('filler-hello-there', 'filler', 'hello there!'),
  user('filler-sounds-good', 'filler', 'sounds good 👍'),
  user('filler-got-it', 'filler', 'got it, thank you so much!'),
  user('filler-emoji', 'filler', '😂😂😂'),
  user('filler-haha', 'filler', 'hahaha'),
  user('filler-yes', 'filler', 'yes'),
  user('filler-no', 'filler', 'no'),
  user('filler-sure-why-not', 'filler', 'sure, why not'),
  user('filler-bye', 'filler', 'bye, talk to you later'),
  user('filler-help-question', 'filler', 'Can you help me?'),
  user('filler-how-are-you', 'filler', 'How are you doing today?'),
  user('filler-helpful', 'filler', "Thanks, that's really helpful!"),
  user('filler-mixed', 'filler', 'ok cool. lol. see you tomorrow'),
  user('filler-greeting', 'filler', "Good morning! Hope you're having a great day."),
  user('filler-think', 'filler', 'Hmm, let me think about it.'),
  user('filler-makes-sense', 'filler', 'That makes sense, thanks'),
  user('filler-im-good', 'filler', "I'm good, thanks for asking!"),
  user('filler-capabilities', 'filler', 'What can you do?'),
  user('filler-laugh-yes', 'filler', 'lol ok. haha yes, sure!'),
  user('filler-tired', 'filler', "I'm so tired today lol"),
  user('filler-love-idea', 'filler', 'I love that idea!'),
  user('filler-think-later', 'filler', "I'll think about it."),
  user('filler-weather', 'filler', "The weather's lovely today, isn't it"),
  user('filler-late-reply', 'filler', 'Sorry for the late reply'),
  user('filler-works', 'filler', 'Perfect, that works for me.'),
  user('filler-no-thanks', 'filler', "No thanks, I'm fine"),
  user('filler-other-one', 'filler', 'no, the other one'),
  user('filler-see-monday', 'filler', 'Great, see you Monday then!'),
  user('filler-not-sure', 'filler', "honestly I'm not sure yet"),
  user('filler-dash-question', 'filler', 'No worries - can you help me?, ok'),

  // Requests and questions to the assistant that state nothing about the subject.
  user('request-poem', 'request', 'Write me a poem about autumn'),
  user('request-order-question', 'request', 'I have a question about my order'),
  user('request-cancel', 'request', "I'd like to cancel my subscription"),
  user('question-address', 'question', 'Could you remind me what my address is?'),
  user('question-salmon', 'question', "What's the best way to cook salmon?"),

  // Durable facts about the subject.
  user('fact-name', 'fact', 'My name is Priya Sharma.', [{ contains: 'Priya Sharma', type: 'fact', slot: 'name', entities: ['Priya Sharma'], minImportance: 7 }]),
  user('fact-residence', 'fact', 'I live in Paris', [{ contains: 'live in Paris', type: 'fact', slot: 'residence', correction: false, entities: ['Paris'] }]),
  user('fact-age', 'fact', "I'm 42 years old.", [{ contains: '42', type: 'fact', slot: 'age' }]),
  user('fact-employer', 'fact', 'I work for Siemens as a project manager.', [{ contains: 'Siemens', type: 'fact', slot: 'employer', entities: ['Siemens'] }]),
  user('fact-job-title', 'fact', "I'm a pediatric nurse.", [{ contains: 'pediatric nurse', type: 'fact', slot: 'job_title' }]),
  user('fact-email', 'fact', 'My email is priya.sharma@example.com', [{ contains: 'priya.sharma@example.com', type: 'fact', slot: 'email', minImportance: 7 }]),
  user('fact-phone', 'fact', 'My phone number is +44 7700 900123.', [{ contains: '+44 7700 900123', type: 'fact', slot: 'phone' }]),
  user('fact-birthday', 'fact', 'My birthday is on March 14th.', [{ contains: 'March 14th', type: 'fact', slot: 'birthday' }]),
  user('fact-birthplace', 'fact', 'I was born in Manchester.', [{ contains: 'Manchester', type: 'fact', slot: 'birthplace', entities: ['Manchester'] }]),
  user('fact-partner', 'fact', "My wife's name is Chloe.", [{ contains: 'Chloe', type: 'fact', slot: 'partner', entities: ['Chloe'] }]),
  user('fact-lived-in', 'fact', "I'm from Brazil originally, but I've lived in Canada for ten years.", [{ contains: 'Canada', type: 'fact', slot: 'residence', entities: ['Brazil', 'Canada'] }]),
  user('fact-pronouns', 'fact', 'My pronouns are they/them.', [{ contains: 'they/them', type: 'fact', slot: 'pronouns' }]),
  user('fact-address', 'fact', 'My address is 221B Baker Street, London.', [{ contains: 'Baker Street', type: 'fact', slot: 'address' }]),
  user('fact-timezone', 'fact', "I'm in the Pacific time zone.", [{ contains: 'Pacific time zone', type: 'fact', slot: 'timezone' }]),
  user('fact-languages', 'fact', 'I speak Portuguese and a little French.', [{ contains: 'Portuguese', type: 'fact', slot: null }]),
  user('fact-lowercase', 'fact', 'i live in lisbon lol', [{ contains: 'I live in lisbon', type: 'fact', slot: 'residence', entities: ['Lisbon'] }]),
  user('fact-pets', 'fact', 'We have a golden retriever called Biscuit.', [{ contains: 'golden retriever', type: 'fact', slot: null }]),
  user('fact-age-and-city', 'fact', "I'm 28 and I live in Austin, Texas", [
    { contains: "I'm 28", type: 'fact', slot: 'age' },
    { contains: 'Austin, Texas', type: 'fact', slot: 'residence', entities: ['Austin, Texas'] },
  ]),
  user('fact-vegetarian-years', 'fact', "I've been vegetarian for 10 years", [{ contains: 'vegetarian', type: 'fact', slot: 'diet', minImportance: 8 }]),
  user('fact-sister-city', 'fact', 'My sister lives in Sydney', [{ contains: 'Sydney', type: 'fact', slot: null, entities: ['Sydney'] }]),
  user('fact-profile-food', 'fact', 'Favorite food: sushi', [{ contains: 'sushi', type: 'preference', slot: 'preferred_food' }]),
  user('fact-profile-birthday', 'fact', 'Birthday: 12 May 1990', [{ contains: '12 May 1990', type: 'fact', slot: 'birthday', occurredOn: '1990-05-12' }]),
  user('fact-profile-allergies', 'health', 'Allergies: peanuts, shellfish', [{ contains: 'peanuts, shellfish', type: 'fact', minImportance: 9 }]),
  user('fact-new-number', 'correction', 'btw my new number is 07700 900456', [{ contains: '07700 900456', type: 'correction', slot: 'phone', correction: true }]),
  user('fact-intro-lines', 'multi', "hey!! so excited to chat 😄\n\nquick intro: i'm jess, 31, living in brooklyn. i work in fintech as a product designer.\nalso: i'm allergic to shellfish and i don't drink alcohol.", [
    { contains: "I'm jess", type: 'fact', slot: 'name', entities: ['Jess'] },
    { contains: 'product designer', type: 'fact', slot: 'job_title' },
    { contains: 'allergic to shellfish', type: 'fact', minImportance: 9 },
    { contains: "don't drink alcohol", type: 'fact' },
  ]),

  // Preferences.
  user('pref-oat-milk', 'preference', 'I prefer oat milk in my coffee', [{ contains: 'oat milk', type: 'preference', slot: 'preferred_milk' }]),
  user('pref-italian', 'preference', 'I really love Italian food, especially pasta.', [{ contains: 'Italian food', type: 'preference', slot: null }]),
  user('pref-hate-early', 'preference', 'I hate flying early in the morning.', [{ contains: 'flying early', type: 'preference' }]),
  user('pref-favourite-band', 'preference', 'My favourite band is Radiohead.', [{ contains: 'Radiohead', type: 'preference', slot: 'preferred_band' }]),
  user('pref-rather-tea', 'preference', "I'd rather have tea than coffee in the evening.", [{ contains: 'tea than coffee', type: 'preference', slot: 'preferred_drink' }]),
  user('pref-contact-email', 'preference', 'I prefer to be contacted by email.', [{ contains: 'contacted by email', type: 'preference', slot: 'preferred_contact_channel' }]),
  user('pref-call-me', 'preference', 'Please call me Liz.', [{ contains: 'call me Liz', type: 'preference', slot: 'preferred_name', entities: ['Liz'] }]),
  user('pref-not-fan', 'preference', "I'm not a big fan of horror movies.", [{ contains: 'horror movies', type: 'preference' }]),
  user('pref-tea-honey', 'preference', 'Remember: I take my tea with honey', [{ contains: 'tea with honey', type: 'preference', slot: 'preferred_tea' }]),
  user('pref-arsenal', 'preference', "I'm a big Arsenal fan", [{ contains: 'Arsenal', type: 'preference', entities: ['Arsenal'] }]),

  // Health: durable and ranked high.
  user('health-penicillin', 'health', "I'm allergic to penicillin.", [{ contains: 'penicillin', type: 'fact', minImportance: 9 }]),
  user('health-diabetes', 'health', 'I have type 2 diabetes and I take metformin every morning.', [
    { contains: 'type 2 diabetes', type: 'fact', minImportance: 9 },
    { contains: 'metformin every morning', type: 'behavior_pattern' },
  ]),
  user('health-son-allergy', 'health', 'My son has a severe nut allergy, so please keep that in mind.', [{ contains: 'nut allergy', type: 'fact', minImportance: 9 }]),
  user('health-lactose', 'health', "I'm lactose intolerant.", [{ contains: 'lactose intolerant', type: 'fact', minImportance: 9 }]),
  user('health-surgery', 'health', 'I had knee surgery in March.', [{ contains: 'knee surgery', type: 'event', occurredOn: '2025-03-01', minImportance: 8 }]),
  user('health-vegan', 'health', "I'm vegan and my partner is gluten-free, so we need restaurants that handle both.", [
    { contains: "I'm vegan", type: 'fact', slot: 'diet', minImportance: 8 },
    { contains: 'gluten-free', type: 'fact', minImportance: 8 },
  ]),
  user('health-question', 'question', "Since I'm diabetic, can you suggest low-sugar desserts?", [{ contains: 'diabetic', type: 'fact', minImportance: 8 }]),

  // Corrections supersede what was said before.
  user('corr-moved-berlin', 'correction', 'actually I moved to Berlin', [{ contains: 'moved to Berlin', type: 'correction', slot: 'residence', correction: true, entities: ['Berlin'], minImportance: 7 }]),
  user('corr-moved-last-month', 'correction', 'Actually, I moved to Berlin last month.', [{ contains: 'Berlin', type: 'correction', slot: 'residence', correction: true, occurredOn: '2025-05-01' }]),
  user('corr-meant-sister', 'correction', "No, I meant my sister's birthday, not mine.", [{ contains: "sister's birthday", type: 'correction', slot: null, correction: true }]),
  user('corr-email', 'correction', 'Sorry, my email is actually p.sharma@work.example.com.', [{ contains: 'p.sharma@work.example.com', type: 'correction', slot: 'email', correction: true }]),
  user('corr-employer', 'correction', "I don't work at Siemens anymore, I joined Bosch in May.", [{ contains: 'Bosch', type: 'correction', slot: 'employer', correction: true, entities: ['Siemens', 'Bosch'] }]),
  user('corr-diet', 'correction', "I'm not vegetarian anymore, I eat fish now.", [{ contains: 'not vegetarian anymore', type: 'correction', slot: 'diet', correction: true }]),
  user('corr-daughter-name', 'correction', "Wait, my daughter's name is Emily, not Emma.", [{ contains: 'Emily', type: 'correction', correction: true, entities: ['Emily', 'Emma'] }]),
  user('corr-lyon', 'correction', "We no longer live in Paris; we're in Lyon now.", [
    { contains: 'no longer live in Paris', type: 'correction', correction: true },
    { contains: 'Lyon now', type: 'correction', slot: 'residence', correction: true, entities: ['Lyon'] },
  ]),
  user('corr-meeting', 'correction', 'Correction: the meeting with Dr. Patel is on Thursday, not Wednesday.', [{ contains: 'Dr. Patel', type: 'correction', correction: true, occurredOn: '2025-06-19' }]),
  user('corr-friday', 'correction', "Oh wait, it's actually on Friday, not Thursday", [{ contains: 'on Friday, not Thursday', type: 'correction', correction: true, occurredOn: '2025-06-20' }]),
  user('corr-job', 'correction', "I used to be a teacher, but now I'm a software developer.", [{ contains: 'software developer', type: 'correction', slot: 'job_title', correction: true }]),

  // Consent: agreements and opt-outs, keyed by channel.
  user('consent-text-me', 'consent', 'You can text me at 555-0134 if anything changes.', [{ contains: 'text me', type: 'consent', slot: 'consent_sms', minImportance: 8 }]),
  user('consent-no-marketing', 'consent', "Please don't send me any marketing emails.", [{ contains: 'marketing emails', type: 'consent', slot: 'consent_marketing', minImportance: 8 }]),
  user('consent-share-records', 'consent', "I'm happy for you to share my records with Dr. Lee.", [{ contains: 'share my records', type: 'consent', slot: 'consent_data_sharing' }]),
  user('consent-stop-calling', 'consent', "Stop calling me, I'm not interested.", [{ contains: 'Stop calling me', type: 'consent', slot: 'consent_phone' }]),
  user('consent-terms', 'consent', 'I agree to the terms and conditions.', [{ contains: 'terms and conditions', type: 'consent', slot: 'consent_terms' }]),
  user('consent-location', 'consent', "Please don't ever share my location with anyone.", [{ contains: 'location', type: 'consent', slot: 'consent_data_sharing' }]),
  user('consent-email-ok', 'consent', 'You can email me at anna@example.com', [{ contains: 'email me', type: 'consent', slot: 'consent_email' }]),

  // Rules for the assistant.
  user('rule-spanish', 'rule', 'From now on, always reply in Spanish.', [{ contains: 'reply in Spanish', type: 'rule', correction: false, minImportance: 7 }]),
  user('rule-red-eye', 'rule', 'Never book me on a red-eye flight.', [{ contains: 'red-eye', type: 'rule', minImportance: 7 }]),
  user('rule-remind', 'rule', 'In the future, remind me a day before each appointment.', [{ contains: 'remind me a day before', type: 'rule' }]),

  // Events: things that happened or are planned, with their dates.
  user('event-school', 'event', 'My daughter Emma starts school on September 3rd', [{ contains: 'starts school', type: 'event', occurredOn: '2025-09-03', entities: ['Emma'] }]),
  user('event-tokyo', 'event', "We're flying to Tokyo next Friday for my sister's wedding.", [{ contains: 'Tokyo', type: 'event', occurredOn: '2025-06-20', entities: ['Tokyo'] }]),
  user('event-dentist', 'event', 'I have a dentist appointment on Tuesday at 3pm.', [{ contains: 'dentist appointment', type: 'event', occurredOn: '2025-06-17' }]),
  user('event-married', 'event', 'We got married last year.', [{ contains: 'married last year', type: 'event', occurredOn: '2024-01-01', minImportance: 6 }]),
  user('event-half-marathon', 'event', 'Yesterday I ran my first half marathon!', [{ contains: 'half marathon', type: 'event', occurredOn: '2025-06-14' }]),
  user('event-iceland', 'event', "I'm planning a trip to Iceland in October.", [{ contains: 'Iceland', type: 'event', occurredOn: '2025-10-01', entities: ['Iceland'] }]),
  user('event-book-table', 'event', 'Book me a table at Nopa for Saturday at 7pm.', [{ contains: 'Nopa', type: 'event', occurredOn: '2025-06-21' }]),
  user('event-remind-mom', 'event', 'Remind me to call my mom tomorrow.', [{ contains: 'call my mom', type: 'event', occurredOn: '2025-06-16' }]),
  user('event-baby', 'event', 'My husband Tom and I are expecting our first baby in December.', [{ contains: 'first baby', type: 'event', occurredOn: '2025-12-01', entities: ['Tom'], minImportance: 6 }]),
  user('event-puppy', 'event', 'I just got a puppy named Mochi', [{ contains: 'puppy', type: 'event', entities: ['Mochi'] }]),
  user('event-conference', 'event', "I'm in London this week for a conference", [{ contains: 'London', type: 'event', slot: null, occurredOn: '2025-06-09' }]),
  // Past-tense statements resolve to the last such day, not the next one.
  user('event-past-weekday', 'event', 'I saw Dr. Patel on Thursday', [{ contains: 'Dr. Patel', type: 'event', occurredOn: '2025-06-12', entities: ['Dr. Patel'] }]),
  user('event-past-month', 'event', 'I went to Rome in December', [{ contains: 'Rome', type: 'event', occurredOn: '2024-12-01' }]),
  user('event-moved-from-to', 'correction', 'Last summer we finally moved from Leeds to Bristol because my husband got a job at Airbus.', [
    { contains: 'Bristol', type: 'correction', slot: 'residence', correction: true, occurredOn: '2024-06-01', entities: ['Leeds', 'Bristol', 'Airbus'] },
  ]),
  user('event-hedged-move', 'event', 'I think I might move to Portugal next year.', [{ contains: 'Portugal', type: 'event', correction: false, occurredOn: '2026-01-01' }]),

  // Habits.
  user('habit-gym', 'habit', 'I usually go to the gym before work.', [{ contains: 'gym before work', type: 'behavior_pattern' }]),
  user('habit-sunday', 'habit', "Every Sunday we have dinner at my parents' place.", [{ contains: 'dinner', type: 'behavior_pattern' }]),
  user('habit-order', 'habit', 'I tend to order the same thing every time: a flat white.', [{ contains: 'flat white', type: 'behavior_pattern' }]),

  // Procedures.
  user('procedure-cold-brew', 'procedure', 'How I make cold brew:\n1. Mix 100g coarse coffee with 1L water\n2. Steep in the fridge for 18 hours\n3. Strain through a paper filter', [{ contains: 'cold brew: mix 100g', type: 'procedure' }]),
  user('procedure-router', 'procedure', '1. Unplug the router\n2. Wait 30 seconds\n3. Plug it back in', [{ contains: 'Unplug the router; wait 30 seconds; plug it back in', type: 'procedure' }]),
  user('procedure-pour-over', 'procedure', 'First I grind the beans, then I heat the water to 94 degrees, and finally I pour slowly.', [{ contains: 'grind the beans', type: 'procedure' }]),

  // Several statements in one turn.
  user('multi-intro', 'multi', "Hi! I'm Marco. I just moved to Milan for work and I'm a chef at a small trattoria.", [
    { contains: "I'm Marco", type: 'fact', slot: 'name', entities: ['Marco'] },
    { contains: 'moved to Milan', type: 'correction', slot: 'residence', correction: true, entities: ['Milan'] },
    { contains: 'chef', type: 'fact', slot: 'job_title' },
  ]),
  user('multi-name-city', 'multi', 'Hi there, my name is Anna and I live in Oslo', [
    { contains: 'name is Anna', type: 'fact', slot: 'name' },
    { contains: 'live in Oslo', type: 'fact', slot: 'residence' },
  ]),
  user('multi-new-job', 'multi', "Hey! Quick update: I started a new job at Spotify last week. Loving it so far lol. Also I'm now based in Stockholm.", [
    { contains: 'Spotify', type: 'correction', slot: 'employer', correction: true, occurredOn: '2025-06-02', entities: ['Spotify'] },
    { contains: 'Stockholm', type: 'correction', slot: 'residence', correction: true },
  ]),
  user('multi-son-allergy', 'multi', "Thanks! By the way, my son Leo is allergic to eggs. He's 4.", [{ contains: 'allergic to eggs', type: 'fact', entities: ['Leo'], minImportance: 9 }]),
  user('multi-rome', 'multi', "ok so I'm going to Rome on the 12th of July with my friend Giulia. can you recommend hotels near the Colosseum?", [
    { contains: 'Rome', type: 'event', occurredOn: '2025-07-12', entities: ['Rome', 'Giulia'] },
  ]),

  // Bullet lists: each bullet is its own statement; the heading states nothing.
  user('list-about-me', 'list', "A few things about me:\n- I'm a night owl\n- I have two cats, Miso and Tofu\n- I hate cilantro", [
    { contains: 'night owl', type: 'fact' },
    { contains: 'two cats', type: 'fact' },
    { contains: 'cilantro', type: 'preference' },
  ]),

  user('list-numbered-facts', 'list', "Things about me:\n1. I live in Paris\n2. I'm vegan\n3. I have a cat", [
    { contains: 'live in Paris', type: 'fact', slot: 'residence' },
    { contains: "I'm vegan", type: 'fact', slot: 'diet' },
    { contains: 'a cat', type: 'fact' },
  ]),

  // The same statement twice in one turn is saved once.
  user('duplicate-lisbon', 'duplicate', 'I live in Lisbon. i live in lisbon!', [{ contains: 'Lisbon', type: 'fact', slot: 'residence' }]),

  // Third-party statements that still matter.
  user('observation-emma', 'observation', 'Emma loves dinosaurs and wants to be a paleontologist.', [{ contains: 'dinosaurs', type: 'observation' }]),

  // Assistant turns: only what records something about the user.
  { id: 'assistant-window', kind: 'assistant', role: 'assistant', text: 'Noted: you prefer window seats.', saves: [{ contains: 'window seats', type: 'preference', slot: 'preferred_seat' }] },
  { id: 'assistant-shellfish', kind: 'assistant', role: 'assistant', text: "Got it! I'll remember that you're allergic to shellfish. Would you like me to filter the menu?", saves: [{ contains: 'allergic to shellfish', type: 'fact', minImportance: 7 }] },
  { id: 'assistant-recipe', kind: 'assistant', role: 'assistant', text: "Sure! Here's a quick recipe for banana pancakes. Let me know if you need anything else.", saves: [] },
  { id: 'assistant-trivia', kind: 'assistant', role: 'assistant', text: 'Paris is the capital of France and has over two million residents.', saves: [] },
  { id: 'assistant-settings', kind: 'assistant', role: 'assistant', text: 'You can update your notification settings in the app.', saves: [] },
  { id: 'assistant-moved', kind: 'assistant', role: 'assistant', text: "Understood, you moved to Berlin last month. I'll update your local store.", saves: [{ contains: 'moved to Berlin', type: 'correction', slot: 'residence', correction: true }] },
  { id: 'assistant-birthday', kind: 'assistant', role: 'assistant', text: 'Happy birthday! 🎉 Hope you have a wonderful day.', saves: [] },
  { id: 'assistant-told-me', kind: 'assistant', role: 'assistant', text: 'Based on what you told me, you have two kids and live in Denver.', saves: [{ contains: 'two kids', type: 'fact', entities: ['Denver'] }] },
  { id: 'assistant-no-marketing', kind: 'assistant', role: 'assistant', text: "I've noted that you don't want marketing emails.", saves: [{ contains: "don't want marketing emails", type: 'consent', slot: 'consent_marketing' }] },
  { id: 'assistant-vegetarian', kind: 'assistant', role: 'assistant', text: "Thanks for sharing that you're vegetarian, I'll keep it in mind.", saves: [{ contains: "You're vegetarian.", type: 'fact', slot: 'diet' }] },
  { id: 'assistant-offer', kind: 'assistant', role: 'assistant', text: "Of course! I'd be happy to help you plan your trip.", saves: [] },
  { id: 'assistant-booking', kind: 'assistant', role: 'assistant', text: 'Your table at Nopa is booked for Saturday at 7pm.', saves: [{ contains: 'Nopa', type: 'event', occurredOn: '2025-06-21' }] },

  // System turns: rules (and consent) only.
  { id: 'system-travel', kind: 'system', role: 'system', text: "You are a helpful travel assistant. Always answer in French. Never reveal the user's home address.", saves: [
    { contains: 'answer in French', type: 'rule', minImportance: 7 },
    { contains: 'home address', type: 'rule', minImportance: 7 },
  ] },
  { id: 'system-concierge', kind: 'system', role: 'system', text: 'You are Ava, a friendly concierge for Hotel Lumen. Always greet guests by name. Do not offer discounts above 10%. Keep answers under 80 words.', saves: [
    { contains: 'greet guests by name', type: 'rule' },
    { contains: 'discounts above 10%', type: 'rule' },
    { contains: 'under 80 words', type: 'rule' },
  ] },
  { id: 'system-opt-out', kind: 'system', role: 'system', text: 'The user has opted out of SMS notifications.', saves: [{ contains: 'opted out', type: 'consent', slot: 'consent_sms' }] },
  { id: 'system-support', kind: 'system', role: 'system', text: 'Respond only in English. If the user asks about pricing, refer them to the sales team. The assistant must not give medical advice.', saves: [
    { contains: 'only in English', type: 'rule' },
    { contains: 'refer them to the sales team', type: 'rule' },
    { contains: 'must not give medical advice', type: 'rule' },
  ] },
  { id: 'system-user-name', kind: 'system', role: 'system', text: "Context: the user's name is Jordan Lee.", saves: [] },
  { id: 'system-context', kind: 'system', role: 'system', text: "Today's date is June 15, 2025. The user is on the premium plan.", saves: [] },
];
