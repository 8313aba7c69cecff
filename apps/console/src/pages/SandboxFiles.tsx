import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { gateway } from '../api/gateway';
import { useSession } from '../auth/session';
import { CardTable, ErrorNotice } from '../components/ui';
import { formatBytes, timeAgo } from '../lib/format';

const join = (dir: string, name: string): string => `${dir.replace(/\/+$/, '')}/${name}`;
const parentOf = (dir: string): string => dir.replace(/\/+$/, '').replace(/\/[^/]*$/, '') || '/';
const nameOf = (path: string): string => path.replace(/\/+$/, '').split('/').pop() ?? path;

/** Browse the sandbox's files; download any file (exact bytes) and upload into the current directory. */
export function SandboxFiles(props: { sandboxId: string }) {
  const s = useSession();
  const queries = useQueryClient();
  const [dir, setDir] = useState('/workspace');
  const [typed, setTyped] = useState('/workspace');
  const [notice, setNotice] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const ids = { path: useId(), upload: useId() };
  const listing = useQuery({
    queryKey: ['files', props.sandboxId, dir],
    queryFn: () => gateway.listDir(s.gateway, props.sandboxId, dir),
  });
  const download = useMutation({
    mutationFn: async (path: string) => {
      const blob = await gateway.download(s.gateway, props.sandboxId, path);
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = nameOf(path);
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return blob.size;
    },
    onSuccess: (size, path) => setNotice(`Downloaded ${path} (${formatBytes(size)}).`),
  });
  const upload = useMutation({
    mutationFn: async (file: File) => {
      await gateway.upload(s.gateway, props.sandboxId, join(dir, file.name), file);
      return file;
    },
    onSuccess: async (file) => {
      setNotice(`Uploaded ${join(dir, file.name)} (${formatBytes(file.size)}).`);
      if (fileInput.current) fileInput.current.value = '';
      await queries.invalidateQueries({ queryKey: ['files', props.sandboxId, dir] });
    },
  });
  const entries = [...(listing.data?.entries ?? [])].sort((a, b) =>
    a.type === b.type ? a.path.localeCompare(b.path) : a.type === 'directory' ? -1 : 1,
  );
  return (
    <>
      <form
        className="row pairs"
        onSubmit={(e) => {
          e.preventDefault();
          setDir(typed.trim() || '/');
        }}
      >
        <label htmlFor={ids.path}>Directory</label>
        <input id={ids.path} value={typed} onChange={(e) => setTyped(e.target.value)} />
        <button type="submit">Open</button>
        <button
          type="button"
          disabled={dir === '/'}
          onClick={() => {
            setDir(parentOf(dir));
            setTyped(parentOf(dir));
          }}
        >
          Up
        </button>
      </form>
      <div className="row">
        <label htmlFor={ids.upload}>Upload a file to {dir}</label>
        <input
          id={ids.upload}
          ref={fileInput}
          type="file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) upload.mutate(f);
          }}
        />
      </div>
      {notice ? (
        <p role="status" className="ok-line">
          {notice}
        </p>
      ) : null}
      <ErrorNotice error={listing.error ?? upload.error ?? download.error} />
      {listing.data ? (
        entries.length === 0 ? (
          <p>{dir} is empty.</p>
        ) : (
          <CardTable caption={`Files in ${dir}`} columns={['Name', 'Size', 'Modified', null]}>
            {entries.map((e) => (
              <tr key={e.path} data-file={nameOf(e.path)}>
                <th scope="row">
                  {e.type === 'directory' ? (
                    <button
                      type="button"
                      className="link"
                      onClick={() => {
                        setDir(e.path);
                        setTyped(e.path);
                      }}
                    >
                      {nameOf(e.path)}/
                    </button>
                  ) : (
                    nameOf(e.path)
                  )}
                </th>
                <td data-label="Size">{e.type === 'file' ? formatBytes(e.size) : e.type}</td>
                <td data-label="Modified">{timeAgo(e.modifiedAt)}</td>
                <td data-label="Actions">
                  {e.type === 'file' ? (
                    <button
                      type="button"
                      onClick={() => download.mutate(e.path)}
                      aria-label={`Download ${nameOf(e.path)}`}
                    >
                      Download
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </CardTable>
        )
      ) : null}
    </>
  );
}
