import { lazy } from './lazy.js';

/** The studio's tools that load on first use, each a chunk of its own (the first screen stays small). */
export const ObjectActions = lazy(() => import('./writes.js').then((module) => module.ObjectActions));
export const ObjectEditor = lazy(() => import('./writes.js').then((module) => module.ObjectEditor));
export const NewObject = lazy(() => import('./writes.js').then((module) => module.NewObject));
export const RecycleBin = lazy(() => import('../screens/RecycleBin.js').then((module) => module.RecycleBin));
export const Account = lazy(() => import('../screens/Account.js').then((module) => module.Account));
export const Model = lazy(() => import('../screens/Model.js').then((module) => module.Model));
export const Export = lazy(() => import('./export.js').then((module) => module.Export));
export const CopyAs = lazy(() => import('./developer.js').then((module) => module.CopyAs));
export const FileView = lazy(() => import('./files.js').then((module) => module.FileView));
export const Upload = lazy(() => import('./upload.js').then((module) => module.Upload));
export const Objects = lazy(() => import('../screens/Objects.js').then((module) => module.Objects));
export const Events = lazy(() => import('../screens/Events.js').then((module) => module.Events));
export const Bulk = lazy(() => import('./bulk.js').then((module) => module.Bulk));
export const Import = lazy(() => import('./import.js').then((module) => module.Import));
export const ClassEditor = lazy(() => import('./model-editor.js').then((module) => module.ClassEditor));
export const SavedViews = lazy(() => import('./views.js').then((module) => module.SavedViews));
export const SaveView = lazy(() => import('./views.js').then((module) => module.SaveView));
export const Metrics = lazy(() => import('../screens/Metrics.js').then((module) => module.Metrics));
