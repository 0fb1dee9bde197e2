// SPDX-License-Identifier: MIT
// Node's own fetch through the twinbox gateway, by HTTP CONNECT (undici's
// ProxyAgent) or by SOCKS5 (a connector written here), trusting only the
// twin's CA. Prints one JSON line per request. Usage:
//   node fetch-through-gateway.mjs connect|socks CRED_JSON_FILE
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { Agent, ProxyAgent } from 'undici';

const [mode, credFile] = process.argv.slice(2);
const cred = JSON.parse(fs.readFileSync(credFile, 'utf8'));
const ca = cred.ca_pem;

function socksConnector(opts, callback) {
  const [host, port] = cred.socks_address.split(':');
  const sock = net.connect(Number(port), host);
  const user = Buffer.from(cred.username), pass = Buffer.from(cred.password);
  const name = Buffer.from(opts.hostname);
  const target = Number(opts.port || 443);
  let step = 0, buf = Buffer.alloc(0);
  const fail = (err) => { sock.destroy(); callback(err, null); };
  sock.once('connect', () => sock.write(Buffer.from([5, 1, 2])));
  sock.on('error', fail);
  sock.on('data', function onData(chunk) {
    buf = Buffer.concat([buf, chunk]);
    if (step === 0 && buf.length >= 2) {
      if (buf[1] !== 2) return fail(new Error('SOCKS5: no username/password method'));
      buf = buf.subarray(2); step = 1;
      sock.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
    }
    if (step === 1 && buf.length >= 2) {
      if (buf[1] !== 0) return fail(new Error('SOCKS5: credentials refused'));
      buf = buf.subarray(2); step = 2;
      const portBytes = Buffer.from([target >> 8, target & 255]);
      sock.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]));
    }
    if (step === 2 && buf.length >= 10) {
      if (buf[1] !== 0) return fail(new Error('SOCKS5: request refused, reply ' + buf[1]));
      sock.removeListener('data', onData);
      sock.removeListener('error', fail);
      const t = tls.connect({ socket: sock, servername: opts.servername || opts.hostname, ca,
                              ALPNProtocols: ['http/1.1'] });
      t.once('secureConnect', () => callback(null, t));
      t.once('error', (err) => callback(err, null));
    }
  });
}

const dispatcher = mode === 'socks'
  ? new Agent({ connect: socksConnector })
  : new ProxyAgent({
      uri: 'http://' + cred.connect_address,
      token: 'Basic ' + Buffer.from(cred.username + ':' + cred.password).toString('base64'),
      requestTls: { ca },
    });

const auth = { Authorization: 'Bearer sk_test_node' };
async function call(method, url, form) {
  const init = { method, headers: { ...auth }, dispatcher };
  if (form) {
    init.body = new URLSearchParams(form).toString();
    init.headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  const res = await fetch(url, init);
  const body = await res.json();
  console.log(JSON.stringify({ method, url, status: res.status, body }));
  return body;
}

const cus = await call('POST', 'https://api.stripe.com/v1/customers',
                       { email: 'node@example.com', 'metadata[via]': mode });
await call('GET', 'https://api.stripe.com/v1/customers/' + cus.id);
await call('GET', 'https://' + cred.canary_host + '/');
await dispatcher.close();
