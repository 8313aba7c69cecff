import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ROLES, type IssuedToken, type Role } from '@paddock/contracts';
import { useId, useState } from 'react';
import { controlPlane } from '../api/control-plane';
import { useSession } from '../auth/session';
import { Badge, CardTable, ConfirmButton, ErrorNotice } from '../components/ui';
import { enumLabel, timeAgo } from '../lib/format';

/** The organization's API tokens: mint one (its secret is shown once, here), revoke any. */
export function TokensPage() {
  const s = useSession();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('SANDBOX_USER');
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [copied, setCopied] = useState(false);
  const ids = { name: useId(), role: useId(), secret: useId() };
  const tokens = useQuery({
    queryKey: ['tokens'],
    queryFn: () => controlPlane.listTokens(s.controlPlane),
  });
  const mint = useMutation({
    mutationFn: () => controlPlane.createToken(s.controlPlane, { name: name.trim(), role }),
    onSuccess: async (t) => {
      setIssued(t);
      setCopied(false);
      setName('');
      await queries.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => controlPlane.revokeToken(s.controlPlane, id),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['tokens'] }),
  });
  return (
    <section>
      <h1>API tokens</h1>
      <form
        className="row pairs"
        onSubmit={(e) => {
          e.preventDefault();
          mint.mutate();
        }}
      >
        <label htmlFor={ids.name}>Name</label>
        <input
          id={ids.name}
          value={name}
          required
          maxLength={128}
          onChange={(e) => setName(e.target.value)}
        />
        <label htmlFor={ids.role}>Role</label>
        <select id={ids.role} value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <button type="submit" className="primary" disabled={mint.isPending || !name.trim()}>
          Mint token
        </button>
      </form>
      <ErrorNotice error={mint.error ?? revoke.error} />
      {issued ? (
        <div className="notice notice-ok" role="region" aria-labelledby={`${ids.secret}-title`}>
          <strong id={`${ids.secret}-title`}>
            Token “{issued.name}” created: copy it now, it is shown only once.
          </strong>
          <p>
            <label htmlFor={ids.secret} className="sr-only">
              New token secret
            </label>
            <input
              id={ids.secret}
              className="code secret"
              readOnly
              value={issued.token}
              onFocus={(e) => e.target.select()}
              data-testid="new-token"
            />
          </p>
          <div className="actions">
            <button
              type="button"
              onClick={() => {
                void navigator.clipboard?.writeText(issued.token).then(
                  () => setCopied(true),
                  () => setCopied(false),
                );
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" onClick={() => setIssued(null)}>
              Done, hide it
            </button>
          </div>
        </div>
      ) : null}
      <ErrorNotice error={tokens.error} />
      {tokens.data ? (
        <CardTable
          caption="Tokens"
          columns={['Name', 'Role', 'Prefix', 'Created', 'Last used', 'Status']}
        >
          {tokens.data.tokens.map((t) => (
            <tr key={t.id} data-token={t.name}>
              <th scope="row">
                {t.name}
                {t.id === s.whoami.token.id ? <span className="sub"> (this session)</span> : null}
              </th>
              <td data-label="Role">{enumLabel(t.role, 'SANDBOX_')}</td>
              <td data-label="Prefix">
                <code>{t.tokenPrefix}…</code>
              </td>
              <td data-label="Created">{timeAgo(t.createTime)}</td>
              <td data-label="Last used">{timeAgo(t.lastUseTime)}</td>
              <td data-label="Status">
                {t.revokeTime ? (
                  <Badge tone="muted">revoked {timeAgo(t.revokeTime)}</Badge>
                ) : (
                  <ConfirmButton
                    label="Revoke"
                    accessibleLabel={`Revoke ${t.name}`}
                    title={`Revoke token “${t.name}”?`}
                    body={
                      <p>
                        Every call made with it is refused from now on (within the APIs' token cache
                        time).
                      </p>
                    }
                    confirmLabel="Revoke"
                    danger
                    disabled={t.id === s.whoami.token.id}
                    onConfirm={() => revoke.mutate(t.id)}
                  />
                )}
              </td>
            </tr>
          ))}
        </CardTable>
      ) : null}
    </section>
  );
}
