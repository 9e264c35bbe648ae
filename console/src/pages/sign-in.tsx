import { useState, type FormEvent } from 'react';
import { signIn, type Session } from '../api.js';
import { ErrorNote } from '../components.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [projectId, setProjectId] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(projectId, key));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>Lattice console</h1>
      <p>Paste a project's id and one of its API keys. The key stays in this tab (sessionStorage) and goes only to this server's API.</p>
      <form onSubmit={submit}>
        <label>
          Project id
          <input name="projectId" value={projectId} onChange={(e) => setProjectId(e.target.value)} required autoComplete="off" />
        </label>
        <label>
          API key
          <input name="key" type="password" value={key} onChange={(e) => setKey(e.target.value)} required autoComplete="off" />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNote error={error} />
    </main>
  );
}
