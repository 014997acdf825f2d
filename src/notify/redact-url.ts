// Hiding the secrets a webhook URL carries before it is shown anywhere.
//
// A webhook URL is often itself the credential. Hidden: the userinfo, the values of query keys that
// name a credential, the path tokens of services whose URL is the secret (Slack, Discord, Microsoft
// Teams, Telegram, ntfy.sh topics), and any other path segment that looks like a random token
// (16+ characters mixing letters and digits: Mattermost, Home Assistant, IFTTT, Zapier…).
import { REDACTED } from "../redact/secrets.js";

const SECRET_QUERY_KEY =
  /^(.*[_-])?(token|key|secret|sig|signature|auth|authorization|password|passwd|pass|pwd|credential|credentials|code|apikey|session|jwt)$|^(access_token|api_key|apikey|x-api-key)$/i;
const TOKEN_SEGMENT = /^(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{16,}$/;

/** Path rewrites of services whose URL path is the secret: host test, then the path with the secret hidden. */
const SERVICE_PATHS: ReadonlyArray<{ host: RegExp; path: (segments: string[]) => string[] }> = [
  // https://hooks.slack.com/services/T…/B…/secret: all three identify the hook.
  { host: /^hooks\.slack\.com$/i, path: (s) => (s[0] === "services" ? ["services", REDACTED] : s.map(() => REDACTED)) },
  // https://discord.com/api/webhooks/<id>/<token>: the id is public, the token is not.
  {
    host: /^(?:[a-z]+\.)?discord(?:app)?\.com$/i,
    path: (s) => (s[1] === "webhooks" ? [...s.slice(0, 3), ...s.slice(3).map(() => REDACTED)] : s),
  },
  // https://<tenant>.webhook.office.com/webhookb2/<ids>/IncomingWebhook/<ids>
  { host: /(^|\.)webhook\.office\.com$/i, path: (s) => [s[0] ?? "", ...s.slice(1).map(() => REDACTED)] },
  // https://api.telegram.org/bot<token>/sendMessage
  {
    host: /^api\.telegram\.org$/i,
    path: (s) => s.map((segment) => (segment.startsWith("bot") ? `bot${REDACTED}` : segment)),
  },
  // https://ntfy.sh/<topic>: anyone who knows the topic can read and write it.
  { host: /^ntfy\.sh$/i, path: (s) => s.map((segment, i) => (i === 0 && segment !== "" ? REDACTED : segment)) },
];

/** `url` with its secrets replaced by [REDACTED]; text that is not a URL comes back unchanged. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const userinfo = parsed.username !== "" || parsed.password !== "" ? `${REDACTED}@` : "";
  let segments = parsed.pathname.split("/").slice(1);
  const service = SERVICE_PATHS.find((entry) => entry.host.test(parsed.hostname));
  if (service) segments = service.path(segments);
  segments = segments.map((segment) => (TOKEN_SEGMENT.test(segment) ? REDACTED : segment));
  const query = [...parsed.searchParams].map(
    ([key, value]) =>
      `${encodeURIComponent(key)}=${SECRET_QUERY_KEY.test(key) && value !== "" ? REDACTED : encodeURIComponent(value)}`,
  );
  // The fragment never reaches the server, but a person may still have pasted a token there.
  const fragment = parsed.hash === "" ? "" : `#${REDACTED}`;
  return `${parsed.protocol}//${userinfo}${parsed.host}${segments.length > 0 ? `/${segments.join("/")}` : ""}${query.length > 0 ? `?${query.join("&")}` : ""}${fragment}`;
}

/** Every URL (scheme://…) inside `text` redacted with redactUrl. */
export function redactUrlsIn(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => redactUrl(url));
}
