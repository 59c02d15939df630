import { consolePageLabels, consolePages } from './console/console-paths';
import { followLink, usePath } from './router';
import { canDevelop, isAdmin, useSession } from './session';

/** The bar at the top of a signed-in page: where to go, who is signed in, and Sign out. */
export function Header() {
  const session = useSession();
  const path = usePath();
  const links = [
    { href: '/', label: 'Search', current: path === '/' || path.startsWith('/c/') },
    { href: '/conversations', label: 'Conversations', current: path === '/conversations' },
    ...(canDevelop(session.user) ? [{ href: '/dev', label: 'Develop', current: path.startsWith('/dev') }] : []),
    ...(isAdmin(session.user)
      ? [
          { href: '/runs', label: 'Runs', current: path === '/runs' || path.startsWith('/runs/') },
          { href: '/queues', label: 'Queues', current: path === '/queues' },
        ]
      : []),
    ...(isAdmin(session.user) ? consolePages.map((page) => ({ href: `/${page}`, label: consolePageLabels[page], current: path === `/${page}` })) : []),
  ];
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav aria-label="Main">
        <ul>
          {links.map((link) => (
            <li key={link.href}>
              <a href={link.href} onClick={followLink} aria-current={link.current ? 'page' : undefined}>
                {link.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="who">
        <span class="who-name">{session.user.callName}</span>
        <button type="button" class="secondary" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </div>
    </header>
  );
}
