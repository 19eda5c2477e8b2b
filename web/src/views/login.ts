/**
 * The login view: the bearer token `extagents serve` printed, kept for this tab only (api.ts), with
 * a note saying why when the server refused the previous one.
 */
import { useState } from 'preact/hooks';
import { html } from '../ui';

/** The token form; `onLogin` gets the token entered (trimmed, never empty). */
export function Login({ note, onLogin }: { note?: string; onLogin: (token: string) => void }) {
  const [token, setTokenText] = useState('');
  return html`
    <main id="main" class="login">
      <h1>ExtAgents</h1>
      <form
        onSubmit=${(event: Event) => {
          event.preventDefault();
          if (token.trim() !== '') onLogin(token.trim());
        }}
      >
        ${note && html`<p class="error" role="alert" data-testid="login-note">${note}</p>`}
        <label for="token">Token</label>
        <p class="hint">The bearer token <code>extagents serve</code> printed (or opened with its URL). It is kept for this tab only.</p>
        <input id="token" type="password" autocomplete="off" value=${token} onInput=${(e: Event) => setTokenText((e.target as HTMLInputElement).value)} autofocus />
        <button type="submit">Log in</button>
      </form>
    </main>
  `;
}
