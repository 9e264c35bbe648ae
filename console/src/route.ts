// Pages are addressed by the URL's hash (#/memories, #/memories/mem_...), so the server serves one
// file and a reload or a shared link opens the same page. Never the key: that stays in sessionStorage.
import { useEffect, useState } from 'react';

export function useHashRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const onChange = () => setParts(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return parts;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;
