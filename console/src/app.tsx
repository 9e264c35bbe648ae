import { lazy, Suspense, useState } from 'react';
import { loadSession, saveSession, type Session } from './api.js';
import { EventsPage } from './pages/events.js';
import { LearningPage } from './pages/learning.js';
import { MemoriesPage } from './pages/memories.js';
import { MemoryPage } from './pages/memory.js';
import { ProjectPage } from './pages/project.js';
import { ReviewPage } from './pages/review.js';
import { SignInPage } from './pages/sign-in.js';
import { SubjectPage } from './pages/subject.js';
import { href, useHashRoute } from './route.js';

// The graph page carries Cytoscape (most of the bundle's weight): it loads when first opened.
const GraphPage = lazy(() => import('./pages/graph.js').then((page) => ({ default: page.GraphPage })));

const PAGES = [
  { path: 'memories', title: 'Memories' },
  { path: 'review', title: 'Review queue' },
  { path: 'subjects', title: 'Subject' },
  { path: 'graph', title: 'Graph' },
  { path: 'events', title: 'Events and alerts' },
  { path: 'learning', title: 'Learning' },
  { path: 'project', title: 'Project' },
] as const;

export function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const route = useHashRoute();

  if (!session) {
    return (
      <SignInPage
        onSignedIn={(signed) => {
          saveSession(signed);
          setSession(signed);
        }}
      />
    );
  }
  const signOut = () => {
    saveSession(undefined);
    setSession(undefined);
  };
  const [page = 'memories', id, more] = route;
  return (
    <div className="shell">
      <header>
        <strong className="brand">Lattice</strong>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a key={p.path} href={href(p.path)} aria-current={page === p.path ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <span className="who">
          {session.projectId} · {session.canWrite ? 'read and write' : 'read only'}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main>
        {page === 'review' ? (
          <ReviewPage session={session} />
        ) : page === 'subjects' ? (
          <SubjectPage session={session} kind={id} externalId={more} />
        ) : page === 'graph' ? (
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <GraphPage session={session} entityId={id} />
          </Suspense>
        ) : page === 'events' ? (
          <EventsPage session={session} />
        ) : page === 'project' ? (
          <ProjectPage session={session} />
        ) : page === 'learning' ? (
          <LearningPage session={session} />
        ) : page === 'memories' && id ? (
          <MemoryPage session={session} id={id} />
        ) : (
          <MemoriesPage session={session} />
        )}
      </main>
    </div>
  );
}
