import type { OdbRestClient } from 'odbrest/client';
import { ObjectPanel } from './ObjectPanel.js';

/** The open object panels, each over the one before; only the top one takes input (Esc closes it). */
export function PanelStack({ client, stack }: { client: OdbRestClient; stack: string[] }) {
  return (
    <div class="panels">
      {stack.map((objectId, index) => (
        <ObjectPanel key={`${index}:${objectId}`} client={client} objectId={objectId} depth={index} top={index === stack.length - 1} />
      ))}
    </div>
  );
}
