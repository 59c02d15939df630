import { useState } from 'preact/hooks';
import type { AccountRef, Plan, Role, ServiceAccountInfo, UserInfo } from '../../../clients/typescript/src/index';
import { useDocumentTitle } from '../document-title';
import { KeyNotice } from './key-notice';
import { LimitsEditor } from './limits-editor';
import { LoadState, StatusLine } from './page-state';
import { formatTime, useAdmin, useChanges, useLoaded } from './use-admin';

const roles: Role[] = ['user', 'developer', 'admin'];
const plans: Plan[] = ['free', 'paid'];

/** The console's Accounts (DESIGN §18): service accounts and users, their roles, keys and limits. */
export function AccountsView() {
  useDocumentTitle('Accounts');
  const admin = useAdmin();
  const accounts = useLoaded(() => admin.listAccounts(), [], 'The accounts could not be loaded. Try again.');
  const [newKey, setNewKey] = useState<{ name: string; key: string } | undefined>();
  const [limitsOf, setLimitsOf] = useState<{ account: AccountRef; label: string } | undefined>();
  const { status, change } = useChanges(accounts);

  const rotate = (name: string) => {
    if (!confirm(`Give ${name} a new key? Its current key stops working at once.`)) return;
    void change(async () => {
      const rotated = await admin.rotateKey(name);
      setNewKey({ name, key: rotated.key });
      return `${name} has a new key.`;
    }, 'The key could not be rotated. Try again.');
  };
  const remove = (name: string) => {
    if (!confirm(`Delete the service account ${name}? Its key stops working at once.`)) return;
    void change(async () => {
      await admin.deleteServiceAccount(name);
      return `${name} was deleted.`;
    }, 'The account could not be deleted. Try again.');
  };
  const setRole = (account: AccountRef, label: string, role: Role) =>
    void change(async () => {
      await admin.setRole(account, role);
      return `${label} is now ${role}.`;
    }, 'The role could not be changed. Try again.');

  return (
    <section aria-labelledby="accounts-heading">
      <h1 id="accounts-heading">Accounts</h1>
      {newKey && <KeyNotice name={newKey.name} keyText={newKey.key} onDone={() => setNewKey(undefined)} />}
      <StatusLine status={status} />
      <LoadState loaded={accounts} />

      <h2>Service accounts</h2>
      {accounts.value && (
        <ServiceAccountsTable accounts={accounts.value.serviceAccounts} onRole={(a, role) => setRole({ name: a.name }, a.name, role)} onRotate={rotate} onDelete={remove} onLimits={(a) => setLimitsOf({ account: { name: a.name }, label: a.name })} />
      )}
      <CreateServiceAccount
        onCreate={(name, role, plan) =>
          change(async () => {
            const created = await admin.createServiceAccount({ name, role, plan });
            setNewKey({ name, key: created.key });
            return `${name} was created.`;
          }, 'The account could not be created. Try again.')
        }
      />

      <h2>Users</h2>
      {accounts.value && <UsersTable users={accounts.value.users} onRole={(u, role) => setRole({ email: u.email }, u.email, role)} onLimits={(u) => setLimitsOf({ account: { email: u.email }, label: u.email })} />}
      <CreateUser
        onCreate={(email, role, plan) =>
          change(async () => {
            await admin.createUser({ email, role, plan });
            return `${email} was created. They set a password with a code sent to that address.`;
          }, 'The user could not be created. Try again.')
        }
      />
      {limitsOf && <LimitsEditor key={limitsOf.label} account={limitsOf.account} label={limitsOf.label} onClose={() => setLimitsOf(undefined)} />}
    </section>
  );
}

function RoleSelect({ label, value, onChange }: { label: string; value: Role; onChange(role: Role): void }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value as Role)}>
      {roles.map((role) => (
        <option key={role} value={role}>
          {role}
        </option>
      ))}
    </select>
  );
}

function ServiceAccountsTable(props: {
  accounts: ServiceAccountInfo[];
  onRole(account: ServiceAccountInfo, role: Role): void;
  onRotate(name: string): void;
  onDelete(name: string): void;
  onLimits(account: ServiceAccountInfo): void;
}) {
  if (!props.accounts.length) return <p>No service accounts yet.</p>;
  return (
    <div class="table-scroll">
      <table class="console-table service-accounts">
        <caption class="visually-hidden">Service accounts, by name</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Plan</th>
            <th scope="col">Key made</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.accounts.map((account) => (
            <tr key={account.id} data-account={account.name}>
              <th scope="row">{account.name}</th>
              <td>
                <RoleSelect label={`Role of ${account.name}`} value={account.role} onChange={(role) => props.onRole(account, role)} />
              </td>
              <td>{account.plan}</td>
              <td>
                <time dateTime={account.keyRotatedAt}>{formatTime(account.keyRotatedAt)}</time>
              </td>
              <td class="row-actions">
                <button type="button" class="secondary" onClick={() => props.onRotate(account.name)}>
                  Rotate key<span class="visually-hidden"> of {account.name}</span>
                </button>
                <button type="button" class="secondary" onClick={() => props.onLimits(account)}>
                  Limits<span class="visually-hidden"> of {account.name}</span>
                </button>
                <button type="button" class="secondary danger" onClick={() => props.onDelete(account.name)}>
                  Delete<span class="visually-hidden"> {account.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function UsersTable(props: { users: UserInfo[]; onRole(user: UserInfo, role: Role): void; onLimits(user: UserInfo): void }) {
  if (!props.users.length) return <p>No users yet.</p>;
  return (
    <div class="table-scroll">
      <table class="console-table users">
        <caption class="visually-hidden">Users, by email</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Plan</th>
            <th scope="col">Since</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((user) => (
            <tr key={user.id} data-account={user.email}>
              <th scope="row">{user.email}</th>
              <td>{user.callName}</td>
              <td>
                <RoleSelect label={`Role of ${user.email}`} value={user.role} onChange={(role) => props.onRole(user, role)} />
              </td>
              <td>{user.plan}</td>
              <td>
                <time dateTime={user.createdAt}>{formatTime(user.createdAt)}</time>
              </td>
              <td class="row-actions">
                <button type="button" class="secondary" onClick={() => props.onLimits(user)}>
                  Limits<span class="visually-hidden"> of {user.email}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Role and plan selects of the create forms, labelled with the form's `prefix`. */
function RolePlanFields({ prefix, role, plan, setRole, setPlan }: { prefix: string; role: Role; plan: Plan; setRole(role: Role): void; setPlan(plan: Plan): void }) {
  return (
    <>
      <div class="field">
        <label for={`${prefix}-role`}>Role</label>
        <select id={`${prefix}-role`} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {roles.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${prefix}-plan`}>Plan</label>
        <select id={`${prefix}-plan`} value={plan} onChange={(e) => setPlan(e.currentTarget.value as Plan)}>
          {plans.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </div>
    </>
  );
}

function CreateServiceAccount({ onCreate }: { onCreate(name: string, role: Role, plan: Plan): Promise<boolean> }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('user');
  const [plan, setPlan] = useState<Plan>('free');
  const submit = async (event: Event) => {
    event.preventDefault();
    if (await onCreate(name.trim(), role, plan)) setName('');
  };
  return (
    <form class="console-form" aria-label="New service account" onSubmit={submit}>
      <div class="field">
        <label for="new-account-name">Name</label>
        <input id="new-account-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required autoComplete="off" />
      </div>
      <RolePlanFields prefix="new-account" role={role} plan={plan} setRole={setRole} setPlan={setPlan} />
      <button type="submit">Create service account</button>
    </form>
  );
}

function CreateUser({ onCreate }: { onCreate(email: string, role: Role, plan: Plan): Promise<boolean> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('user');
  const [plan, setPlan] = useState<Plan>('free');
  const submit = async (event: Event) => {
    event.preventDefault();
    if (await onCreate(email.trim(), role, plan)) setEmail('');
  };
  return (
    <form class="console-form" aria-label="New user" onSubmit={submit}>
      <div class="field">
        <label for="new-user-email">Email</label>
        <input id="new-user-email" type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} required autoComplete="off" />
      </div>
      <RolePlanFields prefix="new-user" role={role} plan={plan} setRole={setRole} setPlan={setPlan} />
      <button type="submit">Create user</button>
    </form>
  );
}
