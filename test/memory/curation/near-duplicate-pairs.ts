// Labelled near-duplicate pairs for memory deduplication tests.
//
// Each pair is two short memories an agent might store about a user, customer, patient, project...
// `same: true` pairs are variants a person would call the same memory (articles, punctuation, word
// order that keeps the meaning, inflection, case and spacing, contractions, or a few of those at
// once). `same: false` pairs are look-alikes that share most words but differ in ONE fact (a place,
// a number, a date or time, a name, a negation, a unit, a reversed preference, a swapped role, or
// the object), most of them by a single short token.
//
// Hand-written for Lattice; no external source or generator. Tests use the set in both
// directions: every same pair must be grouped, and no different pair may be grouped. Pairs are
// independent of each other: only the two texts of one pair are meant to be compared.

export interface NearDuplicatePair {
  a: string;
  b: string;
  /** true: a person would call them the same memory; false: they differ in a fact. */
  same: boolean;
  /** What distinguishes them: for same pairs the kind of variation; for different pairs the fact that differs. */
  kind:
    | 'articles'
    | 'punctuation'
    | 'word-order'
    | 'inflection'
    | 'case-and-spacing'
    | 'contraction'
    | 'combined'
    | 'place'
    | 'number'
    | 'date'
    | 'name'
    | 'negation'
    | 'unit'
    | 'preference'
    | 'role'
    | 'object';
}

export const NEAR_DUPLICATE_PAIRS: readonly NearDuplicatePair[] = [
  // Personal preferences
  { a: 'User prefers the dark theme in every app', b: 'User prefers dark theme in every app', same: true, kind: 'articles' },
  { a: 'Drinks oat milk in her morning coffee', b: 'Drinks goat milk in her morning coffee', same: false, kind: 'object' },
  { a: 'She does not like cilantro in any dish', b: "She doesn't like cilantro in any dish", same: true, kind: 'contraction' },
  { a: 'Prefers tea over coffee in the afternoon', b: 'Prefers coffee over tea in the afternoon', same: false, kind: 'preference' },
  { a: 'Enjoys jazz and classical music while working', b: 'Enjoys classical music and jazz while working', same: true, kind: 'word-order' },
  { a: 'Likes spicy food, especially Thai curries', b: 'Dislikes spicy food, especially Thai curries', same: false, kind: 'negation' },
  { a: 'Likes hiking on weekends with friends', b: 'Likes to hike on weekends with friends', same: true, kind: 'inflection' },
  { a: 'Reads about 20 pages before bed every night', b: 'Reads about 20 minutes before bed every night', same: false, kind: 'unit' },
  { a: 'Favourite band is Radiohead, saw them live twice', b: 'favourite band is radiohead, saw them live twice', same: true, kind: 'case-and-spacing' },
  { a: 'Plays tennis every Sunday with her neighbour Ines', b: 'Plays tennis every Sunday with her neighbour Iris', same: false, kind: 'name' },
  { a: 'Mostly vegetarian; eats fish at restaurants.', b: 'Mostly vegetarian, eats fish at restaurants', same: true, kind: 'punctuation' },
  { a: 'Prefers to shop for groceries on Saturday mornings', b: 'Prefers to shop for groceries on Sunday mornings', same: false, kind: 'date' },
  { a: "User doesn't want marketing emails, only receipts", b: 'The user does not want marketing emails - only receipts', same: true, kind: 'combined' },
  { a: 'Likes cats more than dogs, has one of each', b: 'Likes dogs more than cats, has one of each', same: false, kind: 'preference' },

  // Work
  { a: 'Works remotely from Valencia and speaks fluent Catalan', b: 'Speaks fluent Catalan and works remotely from Valencia', same: true, kind: 'word-order' },
  { a: 'Priya is the manager of Ana on the platform team', b: 'Ana is the manager of Priya on the platform team', same: false, kind: 'role' },
  { a: "He isn't available for calls after 6pm", b: 'He is not available for calls after 6pm', same: true, kind: 'contraction' },
  { a: 'Works closely with Marco on the billing migration', b: 'Works closely with Mario on the billing migration', same: false, kind: 'name' },
  { a: 'Team lead for payments, based in Madrid', b: 'Team lead for payments (based in Madrid)', same: true, kind: 'punctuation' },
  { a: 'Works from the Berlin office three days a week', b: 'Works from the Bern office three days a week', same: false, kind: 'place' },
  { a: 'Prefers working on deep tasks in the morning', b: 'Prefers to work on deep tasks in the morning', same: true, kind: 'inflection' },
  { a: 'Manages a team of 8 engineers in Dublin', b: 'Manages a team of 9 engineers in Dublin', same: false, kind: 'number' },
  { a: 'Title is Senior Product Manager at Northwind', b: 'title is senior product manager at Northwind', same: true, kind: 'case-and-spacing' },
  { a: 'Has sign-off authority for purchases over 5,000 euros', b: 'Has no sign-off authority for purchases over 5,000 euros', same: false, kind: 'negation' },
  { a: "Jordan's on-call this week for the API team", b: 'Jordan is on call this week for the API team', same: true, kind: 'combined' },
  { a: 'Performance review is scheduled for 14 March', b: 'Performance review is scheduled for 14 May', same: false, kind: 'date' },
  { a: 'Works as a contractor for a Lisbon startup', b: 'Works as contractor for Lisbon startup', same: true, kind: 'articles' },
  { a: 'Currently learning Spanish for the client project', b: 'Currently learning Swedish for the client project', same: false, kind: 'object' },
  { a: 'In the mornings Priya does code reviews', b: 'Priya does code review in the mornings', same: true, kind: 'combined' },
  { a: 'Priya lives in Porto and commutes by tram', b: 'Priya lives in Lisbon and commutes by tram', same: false, kind: 'place' },

  // Health
  { a: 'Allergic to peanuts, carries an EpiPen', b: 'Allergic to peanut, carries an EpiPen', same: true, kind: 'inflection' },
  { a: 'Severe allergy to penicillin noted in her chart', b: 'Severe allergy to peanuts noted in her chart', same: false, kind: 'object' },
  { a: "The patient can't tolerate ibuprofen due to reflux", b: 'The patient cannot tolerate ibuprofen due to reflux', same: true, kind: 'contraction' },
  { a: 'Takes 50 mg of sertraline each morning', b: 'Takes 150 mg of sertraline each morning', same: false, kind: 'number' },
  { a: 'Patient reports a mild headache after long screen sessions', b: 'Patient reports mild headache after long screen sessions', same: true, kind: 'articles' },
  { a: 'Prescribed 5 mg of folic acid daily', b: 'Prescribed 5 mcg of folic acid daily', same: false, kind: 'unit' },
  { a: 'Has asthma and type 2 diabetes', b: 'Has type 2 diabetes and asthma', same: true, kind: 'word-order' },
  { a: 'Patient is a smoker and drinks alcohol socially', b: 'Patient is a non-smoker and drinks alcohol socially', same: false, kind: 'negation' },
  { a: 'Blood type: O negative', b: 'Blood type O negative', same: true, kind: 'punctuation' },
  { a: 'Physiotherapy sessions are on Tuesdays at 4pm', b: 'Physiotherapy sessions are on Thursdays at 4pm', same: false, kind: 'date' },
  { a: 'Patient uses a CPAP machine at night', b: 'patient uses a cpap machine at night', same: true, kind: 'case-and-spacing' },
  { a: 'Walks 5 km every evening after dinner', b: 'Walks 5 miles every evening after dinner', same: false, kind: 'unit' },
  { a: "She's lactose intolerant; avoids milk and cream", b: 'She is lactose-intolerant, avoids milk and cream', same: true, kind: 'combined' },
  { a: 'Primary care physician is Dr. Okafor at Riverside Clinic', b: 'Primary care physician is Dr. Okoro at Riverside Clinic', same: false, kind: 'name' },
  { a: 'Suffers from migraines during exam season', b: 'Suffers from migraine during exam season', same: true, kind: 'inflection' },
  { a: 'Patient prefers morning appointments to afternoon ones', b: 'Patient prefers afternoon appointments to morning ones', same: false, kind: 'preference' },
  { a: 'Patient has a follow-up with the cardiologist next week', b: 'Patient has follow-up with cardiologist next week', same: true, kind: 'articles' },
  { a: 'Dr. Reyes referred the patient to Dr. Lind', b: 'Dr. Lind referred the patient to Dr. Reyes', same: false, kind: 'role' },
  { a: 'Every night before bed the patient takes melatonin', b: 'The patient takes melatonin every night before bed', same: true, kind: 'word-order' },
  { a: 'Was prescribed metformin last month', b: 'Was prescribed metoprolol last month', same: false, kind: 'object' },
  { a: 'Began taking vitamin D supplements in winter', b: 'Began to take vitamin D supplements in winter', same: true, kind: 'inflection' },

  // Travel
  { a: 'Flying to Iceland for a week in August', b: 'Flying to Ireland for a week in August', same: false, kind: 'place' },
  { a: 'Prefers an aisle seat on long-haul flights', b: 'Prefers aisle seat on long-haul flights', same: true, kind: 'articles' },
  { a: 'Flight to Austin departs at 9am on Friday', b: 'Flight to Austin departs at 9pm on Friday', same: false, kind: 'date' },
  { a: 'Next month she is travelling to Kyoto with her sister', b: 'She is travelling to Kyoto with her sister next month', same: true, kind: 'word-order' },
  { a: 'Booked 3 nights at the Hotel Lisboa Plaza', b: 'Booked 4 nights at the Hotel Lisboa Plaza', same: false, kind: 'number' },
  { a: 'Passport expires in 2027, renew before the Japan trip', b: 'Passport expires in 2027; renew before the Japan trip', same: true, kind: 'punctuation' },
  { a: 'Would rather take the train than fly within Europe', b: 'Would rather fly than take the train within Europe', same: false, kind: 'preference' },
  { a: "Won't take overnight trains because she can't sleep on them", b: 'Will not take overnight trains because she cannot sleep on them', same: true, kind: 'contraction' },
  { a: 'Checked bag limit on her fare is 23 kg', b: 'Checked bag limit on her fare is 23 lb', same: false, kind: 'unit' },
  { a: 'Member of the Lufthansa Miles & More programme', b: 'member of the Lufthansa  Miles & More programme', same: true, kind: 'case-and-spacing' },
  { a: 'Needs a visa for the conference trip to India', b: 'Does not need a visa for the conference trip to India', same: false, kind: 'negation' },
  { a: 'Likes to explore food markets when travelling', b: 'Likes exploring food markets when travelling', same: true, kind: 'inflection' },
  { a: 'Travelling to the wedding with her cousin Lucia', b: 'Travelling to the wedding with her cousin Lucas', same: false, kind: 'name' },
  { a: 'Travelling to Lisbon on the 3rd, back on the 9th', b: 'travelling to Lisbon on 3rd; back on 9th', same: true, kind: 'combined' },
  { a: 'When flying, prefers window seats', b: 'Prefers window seats when flying', same: true, kind: 'combined' },

  // Customers and orders
  { a: 'Customer lives in Porto and works remotely', b: 'The customer lives in Porto and works remotely', same: true, kind: 'articles' },
  { a: 'Customer reported a damaged item in order #4412', b: 'Customer reported a damaged item in order #4421', same: false, kind: 'number' },
  { a: 'Order #8817 shipped via DHL Express', b: 'Order 8817 shipped via DHL Express', same: true, kind: 'punctuation' },
  { a: 'Customer wants all orders shipped to the Leeds warehouse', b: 'Customer wants all orders shipped to the Luton warehouse', same: false, kind: 'place' },
  { a: "Customer doesn't want to be contacted by phone", b: 'Customer does not want to be contacted by phone', same: true, kind: 'contraction' },
  { a: 'Account manager for Brightline Ltd is Eric', b: 'Account manager for Brightline Ltd is Erin', same: false, kind: 'name' },
  { a: 'Pays by invoice and orders in bulk every quarter', b: 'Orders in bulk every quarter and pays by invoice', same: true, kind: 'word-order' },
  { a: 'Returned the blue wool jacket from order #5530', b: 'Returned the blue wool scarf from order #5530', same: false, kind: 'object' },
  { a: 'Customer ID is ACME-0042 in the CRM', b: 'customer id is ACME-0042 in the crm', same: true, kind: 'case-and-spacing' },
  { a: 'The customer is eligible for free returns', b: 'The customer is not eligible for free returns', same: false, kind: 'negation' },
  { a: 'Customer complains about late deliveries', b: 'Customer complains about late delivery', same: true, kind: 'inflection' },
  { a: 'The customer was referred by Lena Fischer', b: 'The customer referred Lena Fischer', same: false, kind: 'role' },
  { a: "Customer's preferred carrier is UPS, not FedEx", b: "The customer's preferred carrier is UPS - not FedEx.", same: true, kind: 'combined' },
  { a: 'Standing order of 40 boxes of printer paper each month', b: 'Standing order of 40 reams of printer paper each month', same: false, kind: 'unit' },
  { a: 'Customer asked for a refund on the damaged lamp', b: 'Customer asked for refund on damaged lamp', same: true, kind: 'articles' },
  { a: 'Subscription renews on 1 June every year', b: 'Subscription renews on 1 July every year', same: false, kind: 'date' },
  { a: 'Wants a follow-up call after every delivery', b: 'Wants a follow up call after every delivery', same: true, kind: 'punctuation' },
  { a: 'Customer prefers email to phone calls for support', b: 'Customer prefers phone calls to email for support', same: false, kind: 'preference' },
  { a: "It's the customer's second complaint this month", b: "It is the customer's second complaint this month", same: true, kind: 'contraction' },

  // Software projects
  { a: 'The service runs on Node 18 in production', b: 'The service runs on Node 20 in production', same: false, kind: 'number' },
  { a: 'The project uses PostgreSQL 16 and pgvector', b: 'the project uses postgresql 16 and pgvector', same: true, kind: 'case-and-spacing' },
  { a: 'Backend is written in Go and uses Postgres', b: 'Backend is written in Go and uses MySQL', same: false, kind: 'object' },
  { a: 'Repo uses pnpm workspaces, not npm', b: 'Repo uses pnpm workspaces (not npm)', same: true, kind: 'punctuation' },
  { a: 'The billing service calls the auth service on every request', b: 'The auth service calls the billing service on every request', same: false, kind: 'role' },
  { a: 'Deploys go through a staging environment first', b: 'Deploys go through staging environment first', same: true, kind: 'articles' },
  { a: 'CI runs the integration tests on every pull request', b: 'CI does not run the integration tests on every pull request', same: false, kind: 'negation' },
  { a: 'Uses ESLint and Prettier on every commit', b: 'Uses Prettier and ESLint on every commit', same: true, kind: 'word-order' },
  { a: 'Request timeout for the payments API is 30 seconds', b: 'Request timeout for the payments API is 30 milliseconds', same: false, kind: 'unit' },
  { a: "The staging database isn't backed up nightly", b: 'The staging database is not backed up nightly', same: true, kind: 'contraction' },
  { a: 'Pinned to React 18.2 because of a plugin bug', b: 'Pinned to React 18.3 because of a plugin bug', same: false, kind: 'number' },
  { a: 'Team prefers squashing commits before merge', b: 'Team prefers to squash commits before merge', same: true, kind: 'inflection' },
  { a: 'Code freeze starts at 5pm on Thursday', b: 'Code freeze starts at 5pm on Tuesday', same: false, kind: 'date' },
  { a: "Project's main branch is `main`, not `master`", b: "The project's main branch is main, not master", same: true, kind: 'combined' },
  { a: 'Team prefers Python over Go for internal scripts', b: 'Team prefers Go over Python for internal scripts', same: false, kind: 'preference' },
  { a: 'Main repo is hosted on GitHub under lattice-ai', b: 'main repo is hosted on github under  lattice-ai', same: true, kind: 'case-and-spacing' },
  { a: 'Production database is hosted in eu-west-1', b: 'Production database is hosted in eu-west-2', same: false, kind: 'place' },
  { a: 'Code owner for the auth module is Tom', b: 'Code owner for the auth module is Tim', same: false, kind: 'name' },

  // Family
  { a: 'Has 2 children in primary school', b: 'Has 3 children in primary school', same: false, kind: 'number' },
  { a: 'Has a dog named Biscuit who is afraid of thunder', b: 'Has dog named Biscuit who is afraid of thunder', same: true, kind: 'articles' },
  { a: 'Cat is called Milo and hates the vacuum cleaner', b: 'Cat is called Miso and hates the vacuum cleaner', same: false, kind: 'name' },
  { a: 'Sister Anna and brother Tom both live nearby', b: 'Brother Tom and sister Anna both live nearby', same: true, kind: 'word-order' },
  { a: "Her brother Sam is Noah's godfather", b: "Noah is her brother Sam's godfather", same: false, kind: 'role' },
  { a: "They're expecting their second baby in October", b: 'They are expecting their second baby in October', same: true, kind: 'contraction' },
  { a: "Daughter's birthday is on 12 April", b: "Daughter's birthday is on 21 April", same: false, kind: 'date' },
  { a: 'Married to Daniel; together since 2012.', b: 'Married to Daniel, together since 2012', same: true, kind: 'punctuation' },
  { a: 'His father still drives and does his own shopping', b: 'His father no longer drives and does his own shopping', same: false, kind: 'negation' },
  { a: 'Son has started learning the violin', b: 'Son has started to learn the violin', same: true, kind: 'inflection' },
  { a: 'Her brother moved to Austria for work', b: 'Her brother moved to Australia for work', same: false, kind: 'place' },
  { a: "Wife's name is María José", b: "wife's name is  María José", same: true, kind: 'case-and-spacing' },
  { a: 'Daughter takes ballet classes on Saturdays', b: 'Daughter takes karate classes on Saturdays', same: false, kind: 'object' },
  { a: "The twins' school starts at 8:30", b: 'Twins school starts at 8:30', same: true, kind: 'combined' },

  // Schedules
  { a: 'Goes to the climbing gym on Fridays after work', b: 'Goes to the climbing gym on Mondays after work', same: false, kind: 'date' },
  { a: 'On Fridays she goes swimming', b: 'She goes swimming on Fridays', same: true, kind: 'word-order' },
  { a: 'Daily standup is at 9:30 in the Oak room', b: 'Daily standup is at 10:30 in the Oak room', same: false, kind: 'date' },
  { a: 'Gym sessions Monday, Wednesday and Friday at 7am', b: 'gym sessions monday, wednesday and friday at 7AM', same: true, kind: 'case-and-spacing' },
  { a: 'Commute is about 40 minutes each way', b: 'Commute is about 40 km each way', same: false, kind: 'unit' },
  { a: "She can't do meetings before 10am on Mondays", b: 'She cannot do meetings before 10am on Mondays', same: true, kind: 'contraction' },
  { a: 'Available for calls during lunch on Thursdays', b: 'Not available for calls during lunch on Thursdays', same: false, kind: 'negation' },
  { a: 'Picks up the kids from school at 3:15', b: 'Picks up kids from school at 3:15', same: true, kind: 'articles' },
  { a: 'Weekly one-on-one with Dana every Tuesday', b: 'Weekly one-on-one with Dina every Tuesday', same: false, kind: 'name' },
  { a: 'Out of office until Monday 3 June.', b: 'Out of office until Monday 3 June', same: true, kind: 'punctuation' },
  { a: 'Has 3 recurring meetings every Wednesday afternoon', b: 'Has 5 recurring meetings every Wednesday afternoon', same: false, kind: 'number' },
  { a: "Doesn't schedule anything on Sunday mornings", b: 'does not schedule anything on sunday mornings.', same: true, kind: 'combined' },
  { a: 'Alex covers for Jordan during school holidays', b: 'Jordan covers for Alex during school holidays', same: false, kind: 'role' },
  { a: 'Tuesday yoga class is at the Camden studio', b: 'Tuesday yoga class is at the Clapham studio', same: false, kind: 'place' },

  // Finance
  { a: 'Monthly budget for groceries is 600 euros', b: 'Monthly budget for groceries is 650 euros', same: false, kind: 'number' },
  { a: 'Pays the rent by a standing order on the 1st', b: 'Pays rent by standing order on the 1st', same: true, kind: 'articles' },
  { a: 'Invoice total for March was 4,200 EUR', b: 'Invoice total for March was 4,200 USD', same: false, kind: 'unit' },
  { a: "User hasn't filed the 2023 tax return yet", b: 'User has not filed the 2023 tax return yet', same: true, kind: 'contraction' },
  { a: 'Prefers index funds to individual stocks', b: 'Prefers individual stocks to index funds', same: false, kind: 'preference' },
  { a: 'Every month she moves 500 euros into savings', b: 'She moves 500 euros into savings every month', same: true, kind: 'word-order' },
  { a: 'Mortgage rate is fixed at 3.1% until 2029', b: 'Mortgage rate is fixed at 3.7% until 2029', same: false, kind: 'number' },
  { a: 'Banks with ING and uses Revolut for travel', b: 'banks with ING and uses revolut for travel', same: true, kind: 'case-and-spacing' },
  { a: 'Quarterly VAT return is due on the 7th', b: 'Quarterly VAT return is due on the 17th', same: false, kind: 'date' },
  { a: 'Budget priorities: rent, savings, then travel.', b: 'Budget priorities - rent, savings, then travel', same: true, kind: 'punctuation' },
  { a: 'Has paid off the car loan', b: 'Has not paid off the car loan', same: false, kind: 'negation' },
  { a: 'Started investing in ETFs last year', b: 'Started to invest in ETFs last year', same: true, kind: 'inflection' },
  { a: 'Sam owes Priya 200 euros for the concert tickets', b: 'Priya owes Sam 200 euros for the concert tickets', same: false, kind: 'role' },
  { a: '  Monthly rent is 1,150 euros  ', b: 'Monthly rent is 1,150 euros', same: true, kind: 'case-and-spacing' },
  { a: 'Accountant is Marta Silva from Silva & Co', b: 'Accountant is Maria Silva from Silva & Co', same: false, kind: 'name' },
  { a: "Doesn't use credit cards, pays by debit only", b: 'does not use credit cards - pays by debit only', same: true, kind: 'combined' },
  { a: 'Pays a monthly subscription to Spotify', b: 'Pays a monthly subscription to Netflix', same: false, kind: 'object' },
  { a: 'Holds a savings account at the Zurich branch', b: 'Holds a savings account at the Geneva branch', same: false, kind: 'place' },
];
