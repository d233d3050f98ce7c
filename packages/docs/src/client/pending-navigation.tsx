/**
 * Replaces @docusaurus/core's client/PendingNavigation (wired by the plugin in
 * docusaurus.config.ts). Identical except for one branch: when a route's chunks fail to load,
 * core calls `window.location.reload()`, which loses the user's place and, if the chunk is still
 * unavailable, leaves a page without JavaScript. The site shows the failure with a Retry
 * button, so we log the warning and render the route: its lazy loader then renders
 * `@theme/Loading` with the error and a Retry that loads the chunks again.
 */
import ClientLifecyclesDispatcher, {
  dispatchLifecycleAction,
} from '@docusaurus/core/lib/client/ClientLifecyclesDispatcher';
import ExecutionEnvironment from '@docusaurus/core/lib/client/exports/ExecutionEnvironment';
import preload from '@docusaurus/core/lib/client/preload';
import type { Location } from 'history';
import React, { type ReactNode } from 'react';
import { Route } from 'react-router-dom';

interface Props {
  readonly location: Location;
  readonly children: ReactNode;
}

interface State {
  readonly nextRouteHasLoaded: boolean;
}

export default class PendingNavigation extends React.Component<Props, State> {
  private previousLocation: Location | null = null;
  private routeUpdateCleanupCb: () => void;

  constructor(props: Props) {
    super(props);
    this.routeUpdateCleanupCb = ExecutionEnvironment.canUseDOM
      ? dispatchLifecycleAction('onRouteUpdate', { previousLocation: null, location: this.props.location })
      : () => {};
    this.state = { nextRouteHasLoaded: true };
  }

  override shouldComponentUpdate(nextProps: Props, nextState: State): boolean {
    if (nextProps.location === this.props.location) {
      return nextState.nextRouteHasLoaded;
    }
    const nextLocation = nextProps.location;
    this.previousLocation = this.props.location;
    this.setState({ nextRouteHasLoaded: false });
    this.routeUpdateCleanupCb = dispatchLifecycleAction('onRouteUpdate', {
      previousLocation: this.previousLocation,
      location: nextLocation,
    });
    const done = () => {
      this.routeUpdateCleanupCb();
      this.setState({ nextRouteHasLoaded: true });
    };
    preload(nextLocation.pathname)
      .then(done)
      .catch((error: unknown) => {
        console.warn(error);
        done();
      });
    return false;
  }

  override render(): ReactNode {
    const { children, location } = this.props;
    return (
      <ClientLifecyclesDispatcher previousLocation={this.previousLocation} location={location}>
        <Route location={location} render={() => children} />
      </ClientLifecyclesDispatcher>
    );
  }
}
