// SPDX-License-Identifier: MIT
// The official e2b SDK (pinned in package.json) drives twinbox's fake E2B. Every call
// goes through the SDK's own request building and response parsing, so a pass means
// the fake speaks E2B as the SDK understands it. Prints TAP.
// Needs E2B_API_KEY, E2B_API_URL and E2B_SANDBOX_URL pointing at the fake.
import assert from 'node:assert/strict'
import {
  Sandbox, CommandExitError, TimeoutError, NotFoundError, SandboxNotFoundError,
  FileNotFoundError, AuthenticationError,
} from 'e2b'

const admin = process.env.E2B_API_URL
const run = `run-${process.pid}-${Date.now()}`
let n = 0, failed = 0
const killAtEnd = new Set()

async function check(name, fn) {
  n++
  try {
    await fn()
    console.log(`ok ${n} - ${name}`)
  } catch (e) {
    failed++
    console.log(`not ok ${n} - ${name}`)
    for (const line of String(e && e.stack || e).split('\n')) console.log(`# ${line}`)
  }
}

async function fake(path, body) {
  const r = await fetch(admin + '/_fake' + path, body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  })
  return r.json()
}

async function fakeSandbox(id) {
  return (await fake('/sandboxes')).find((s) => s.id === id)
}

const rejects = async (p, cls, test) => {
  let err
  try { await p } catch (e) { err = e }
  assert.ok(err, 'expected the call to fail')
  assert.ok(err instanceof cls, `expected ${cls.name}, got ${err && err.constructor.name}: ${err}`)
  if (test) test(err)
  return err
}

let sbx
await check('Sandbox.create with metadata, envs, timeout and onTimeout pause', async () => {
  sbx = await Sandbox.create('base', {
    metadata: { suite: 'conformance', run },
    envs: { GREETING: 'hello' },
    timeoutMs: 120_000,
    lifecycle: { onTimeout: 'pause' },
  })
  killAtEnd.add(sbx.sandboxId)
  assert.match(sbx.sandboxId, /^[a-z0-9]{20}$/)
  const s = await fakeSandbox(sbx.sandboxId)
  assert.equal(s.auto_pause, true)
  assert.equal(s.timeout_s, 120)
  assert.deepEqual(s.metadata, { suite: 'conformance', run })
  assert.deepEqual(s.env_vars, { GREETING: 'hello' })
  assert.equal(s.request.templateID, 'base')
})

await check('commands.run with env and cwd', async () => {
  const r = await sbx.commands.run('echo "$GREETING $EXTRA"; pwd; id -un', { envs: { EXTRA: 'there' }, cwd: '/tmp' })
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'hello there\n/tmp\nuser\n')
  assert.equal(r.stderr, '')
})

await check('commands.run streams onStdout and onStderr as output arrives', async () => {
  const seen = []
  const t0 = Date.now()
  const r = await sbx.commands.run('for i in 1 2 3; do echo line$i; sleep 0.3; done; echo oops >&2', {
    onStdout: (d) => seen.push([Date.now() - t0, 'out', d]),
    onStderr: (d) => seen.push([Date.now() - t0, 'err', d]),
  })
  const total = Date.now() - t0
  assert.equal(r.stdout, 'line1\nline2\nline3\n')
  assert.equal(r.stderr, 'oops\n')
  assert.ok(seen.filter((s) => s[1] === 'out').length >= 3, JSON.stringify(seen))
  assert.ok(seen[0][0] < total - 400, `first chunk at ${seen[0][0]} ms of ${total} ms`)
})

await check('a non-zero exit raises CommandExitError', async () => {
  await rejects(sbx.commands.run('echo out; echo err >&2; exit 3'), CommandExitError, (e) => {
    assert.equal(e.exitCode, 3)
    assert.equal(e.stdout, 'out\n')
    assert.equal(e.stderr, 'err\n')
  })
})

await check('commands.run timeout raises TimeoutError', async () => {
  const t0 = Date.now()
  await rejects(sbx.commands.run('sleep 10', { timeoutMs: 700 }), TimeoutError)
  assert.ok(Date.now() - t0 < 5000)
})

await check('a background command is listed and killed with a signal', async () => {
  const h = await sbx.commands.run('sleep 30', { background: true })
  assert.ok(h.pid > 0)
  const procs = await sbx.commands.list()
  assert.ok(procs.some((p) => p.pid === h.pid), JSON.stringify(procs))
  assert.equal(await h.kill(), true)
  await rejects(h.wait(), CommandExitError, (e) => assert.equal(e.exitCode, -1))
  assert.equal(await sbx.commands.kill(h.pid), false)
})

await check('files.write and files.read (text and bytes)', async () => {
  const info = await sbx.files.write('/home/user/dir/a.txt', 'content\n')
  assert.equal(info.path, '/home/user/dir/a.txt')
  assert.equal(info.name, 'a.txt')
  assert.equal(await sbx.files.read('/home/user/dir/a.txt'), 'content\n')
  await sbx.files.write('rel.bin', new Uint8Array([0, 1, 2, 255]).buffer)
  const bytes = await sbx.files.read('/home/user/rel.bin', { format: 'bytes' })
  assert.deepEqual(Array.from(bytes), [0, 1, 2, 255])
  await sbx.files.write('/home/user/empty.txt', '')
  assert.equal(await sbx.files.read('/home/user/empty.txt'), '')
})

await check('files.write several files, octet-stream and gzip; read with gzip', async () => {
  const infos = await sbx.files.write([
    { path: '/home/user/m/one.txt', data: 'one' },
    { path: '/home/user/m/two.txt', data: 'two' },
  ])
  assert.deepEqual(infos.map((i) => i.path).sort(), ['/home/user/m/one.txt', '/home/user/m/two.txt'])
  await sbx.files.write('/home/user/m/oct.txt', 'octet', { useOctetStream: true })
  await sbx.files.write('/home/user/m/gz.txt', 'zipped '.repeat(100), { gzip: true })
  assert.equal(await sbx.files.read('/home/user/m/oct.txt'), 'octet')
  assert.equal(await sbx.files.read('/home/user/m/gz.txt', { gzip: true }), 'zipped '.repeat(100))
  const r = await sbx.commands.run('cat /home/user/m/one.txt /home/user/m/two.txt')
  assert.equal(r.stdout, 'onetwo')
})

await check('files.list, makeDir, exists, remove, rename', async () => {
  const list = await sbx.files.list('/home/user/dir')
  assert.deepEqual(list.map((e) => [e.name, e.type, e.path]), [['a.txt', 'file', '/home/user/dir/a.txt']])
  assert.equal(list[0].size, 8)
  const deep = await sbx.files.list('/home/user', { depth: 2 })
  assert.ok(deep.some((e) => e.path === '/home/user/dir/a.txt'))
  assert.ok(deep.some((e) => e.path === '/home/user/dir' && e.type === 'dir'))
  assert.equal(await sbx.files.makeDir('/home/user/newdir/sub'), true)
  assert.equal(await sbx.files.makeDir('/home/user/newdir/sub'), false)
  assert.equal(await sbx.files.exists('/home/user/dir/a.txt'), true)
  assert.equal(await sbx.files.exists('/home/user/nope'), false)
  const moved = await sbx.files.rename('/home/user/dir/a.txt', '/home/user/dir/b.txt')
  assert.equal(moved.path, '/home/user/dir/b.txt')
  await sbx.files.remove('/home/user/dir/b.txt')
  assert.equal(await sbx.files.exists('/home/user/dir/b.txt'), false)
  const info = await sbx.files.getInfo('/home/user/newdir')
  assert.equal(info.type, 'dir')
  await rejects(sbx.files.read('/home/user/missing.txt'), NotFoundError)
  await rejects(sbx.files.list('/home/user/missing-dir'), NotFoundError)
})

await check('signed download and upload URLs work without the access token header', async () => {
  await sbx.files.write('/home/user/signed.txt', 'signed!')
  const url = await sbx.downloadUrl('/home/user/signed.txt')
  assert.match(url, /signature=v1_/)
  const res = await fetch(url, { headers: { 'E2b-Sandbox-Id': sbx.sandboxId } })
  assert.equal(res.status, 200)
  assert.equal(await res.text(), 'signed!')
  const bad = await fetch(url.replace(/signature=v1_[^&]+/, 'signature=v1_AAAA'), {
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId },
  })
  assert.equal(bad.status, 401)
  const up = await sbx.uploadUrl('/home/user/uploaded.txt')
  const form = new FormData()
  form.append('file', new Blob(['via url']), '/home/user/uploaded.txt')
  const ur = await fetch(up, { method: 'POST', body: form, headers: { 'E2b-Sandbox-Id': sbx.sandboxId } })
  assert.equal(ur.status, 200)
  assert.equal(await sbx.files.read('/home/user/uploaded.txt'), 'via url')
})

await check('setTimeout and getInfo', async () => {
  await sbx.setTimeout(60_000)
  const s = await fakeSandbox(sbx.sandboxId)
  assert.ok(s.end_in_s > 55 && s.end_in_s <= 60, String(s.end_in_s))
  const info = await sbx.getInfo()
  assert.equal(info.sandboxId, sbx.sandboxId)
  assert.equal(info.state, 'running')
  assert.deepEqual(info.metadata, { suite: 'conformance', run })
  assert.ok(info.endAt > info.startedAt)
  assert.equal(await sbx.isRunning(), true)
  assert.equal(sbx.getHost(8080), `8080-${sbx.sandboxId}.${process.env.E2B_DOMAIN || 'e2b.app'}`)
})

await check('pause returns true then false; Sandbox.connect resumes with files kept', async () => {
  assert.equal(await sbx.pause(), true)
  assert.equal((await fakeSandbox(sbx.sandboxId)).state, 'paused')
  assert.equal(await sbx.pause(), false)
  assert.equal(await sbx.isRunning(), false)
  const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 90_000 })
  assert.equal((await fakeSandbox(sbx.sandboxId)).state, 'running')
  assert.equal(await again.files.read('/home/user/signed.txt'), 'signed!')
  const r = await again.commands.run('echo $GREETING')
  assert.equal(r.stdout, 'hello\n')
  sbx = again
})

await check('Sandbox.list filters by metadata and pages', async () => {
  const more = []
  for (let i = 0; i < 2; i++) {
    const s = await Sandbox.create('base', { metadata: { suite: 'conformance', run, i: String(i) } })
    killAtEnd.add(s.sandboxId)
    more.push(s)
  }
  const other = await Sandbox.create('base', { metadata: { suite: 'other' } })
  killAtEnd.add(other.sandboxId)
  await fake('/config', { page_size: 2 })
  try {
    const pager = Sandbox.list({ query: { metadata: { run } } })
    const seen = []
    let pages = 0
    while (pager.hasNext) {
      const items = await pager.nextItems()
      pages++
      for (const it of items) {
        assert.equal(it.metadata.run, run)
        assert.ok(['running', 'paused'].includes(it.state))
        seen.push(it.sandboxId)
      }
    }
    assert.equal(pages, 2)
    assert.deepEqual(seen.sort(), [sbx.sandboxId, ...more.map((s) => s.sandboxId)].sort())
    const one = await Sandbox.list({ query: { metadata: { run, i: '1' } } }).nextItems()
    assert.deepEqual(one.map((s) => s.sandboxId), [more[1].sandboxId])
  } finally {
    await fake('/config', { page_size: 100 })
  }
})

await check('kill returns true, then false; a killed sandbox is not found', async () => {
  assert.equal(await sbx.kill(), true)
  killAtEnd.delete(sbx.sandboxId)
  assert.equal(await Sandbox.kill(sbx.sandboxId), false)
  assert.equal(await sbx.isRunning(), false)
  await rejects(Sandbox.connect(sbx.sandboxId), SandboxNotFoundError)
  await rejects(sbx.setTimeout(1000), SandboxNotFoundError)
})

await check('a wrong API key raises AuthenticationError', async () => {
  await rejects(Sandbox.create('base', { apiKey: 'e2b_wrong' }), AuthenticationError)
})

for (const id of killAtEnd) {
  try { await Sandbox.kill(id) } catch { /* best effort */ }
}
console.log(`1..${n}`)
console.log(`# ${n - failed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
