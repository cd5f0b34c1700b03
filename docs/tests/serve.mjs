// A tiny static file server for the built site (docs/.vitepress/dist) on
// 127.0.0.1 only, with VitePress's clean URLs (/why-rdma -> why-rdma.html).
// Used by docs/build.sh --serve and, imported, by the browser tests.
//   node docs/tests/serve.mjs DIST_DIR [PORT]   (PORT 0 or absent: a free one)
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
  '.gz': 'application/gzip',
  '.sha256': 'text/plain; charset=utf-8',
};

async function isFile(filePath) {
  try {
    return (await stat(filePath)).isFile();
  } catch {
    return false;
  }
}

// The file a request path maps to, or null: exact file, PATH.html, PATH/index.html.
export async function resolveSitePath(distDir, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const root = path.resolve(distDir);
  const candidate = path.resolve(root, `.${decoded}`);
  if (candidate !== root && !candidate.startsWith(root + path.sep)) return null;
  for (const file of [candidate, `${candidate}.html`, path.join(candidate, 'index.html')]) {
    if (await isFile(file)) return file;
  }
  return null;
}

// Starts the server; resolves to { url, close() }.
export function startServer(distDir, port = 0) {
  const server = createServer(async (request, response) => {
    const urlPath = new URL(request.url, 'http://127.0.0.1').pathname;
    const file = await resolveSitePath(distDir, urlPath);
    if (!file) {
      const notFound = path.join(distDir, '404.html');
      response.writeHead(404, { 'content-type': CONTENT_TYPES['.html'] });
      response.end(await isFile(notFound) ? await readFile(notFound) : 'not found');
      return;
    }
    response.writeHead(200, {
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : await readFile(file));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: actualPort } = server.address();
      resolve({
        url: `http://127.0.0.1:${actualPort}`,
        close: () => new Promise((done) => {
          server.closeAllConnections?.();
          server.close(() => done());
        }),
      });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const distDir = process.argv[2];
  const port = Number(process.argv[3] ?? 0);
  if (!distDir || !(await isFile(path.join(distDir, 'index.html')))) {
    console.error(`serve.mjs: no built site in ${distDir ?? '(no directory given)'}: run docs/build.sh first`);
    process.exit(1);
  }
  const { url } = await startServer(distDir, port);
  console.log(`docs: serving ${path.resolve(distDir)} at ${url}/ (Ctrl-C to stop)`);
}
