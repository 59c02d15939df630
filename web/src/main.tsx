import { render } from 'preact';
import { App } from './app';

render(<App defaultAgent={document.querySelector<HTMLMetaElement>('meta[name="agentexec-default-agent"]')?.content ?? 'hello'} />, document.getElementById('app')!);
