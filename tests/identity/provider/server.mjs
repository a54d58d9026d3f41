// A real OpenID provider for the identity-provider tests: oidc-provider, issuing RFC 9068 JWT access tokens to a
// client by the client-credentials grant with a resource indicator (RFC 8707), which needs no browser.
//   node server.mjs [--port 0]
// Prints "… listening on http://127.0.0.1:PORT" once it accepts connections, as every server of the project does.
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const portArgument = process.argv.indexOf('--port');
const port = portArgument > 0 ? Number(process.argv[portArgument + 1]) : 0;

// Fresh keys each run: an RSA key (RS256, what Auth0, Okta, Keycloak and Entra ID sign with) and an EC one.
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });

// A token request's own form field (the tests choose the person and the algorithm per token).
const bodyParam = (ctx, name) => (ctx.oidc.body && typeof ctx.oidc.body[name] === 'string' ? ctx.oidc.body[name] : undefined);

const server = http.createServer();
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    scopes: ['openid', 'cart:write', 'orders:read'],
    clients: [{
      client_id: 'shop-assistant',
      client_secret: 'shop-assistant-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: 'cart:write orders:read',
    }],
    jwks: { keys: [{ ...rsa, kid: 'rsa-1', use: 'sig', alg: 'RS256' }, { ...ec, kid: 'ec-1', use: 'sig', alg: 'ES256' }] },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        // Every resource asked for is served, its tokens JWTs for it: the audience is the resource indicator.
        getResourceServerInfo: (ctx, resource) => ({
          scope: 'cart:write orders:read',
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: bodyParam(ctx, 'alg') || 'RS256' } },
        }),
      },
    },
    // The person the token stands for: a claim the tests name as the subject claim.
    extraTokenClaims: (ctx) => ({ person: bodyParam(ctx, 'person') || 'alice' }),
    extraParams: ['person', 'alg'],
  });
  provider.proxy = false;
  server.on('request', provider.callback());
  console.log(`openid provider listening on ${issuer}`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
